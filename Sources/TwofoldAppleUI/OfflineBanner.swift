#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldScreens

    /// Seed 003's offline state on the protected screens: the server cannot be reached, what
    /// waits to be sent, and "Try again" (`AppModel.checkConnection()`, which sends the waiting
    /// changes once the server answers).
    struct OfflineBanner: View {
        let app: AppModel
        @State private var checking = false

        var body: some View {
            HStack(spacing: 12) {
                Image(systemName: "wifi.slash").accessibilityHidden(true)
                VStack(alignment: .leading, spacing: 2) {
                    Text("You're offline").font(.subheadline.weight(.semibold))
                    Text(detail).font(.footnote).foregroundStyle(.secondary)
                    // What waits, one by one, in the order it will be sent.
                    if !app.waiting.isEmpty {
                        DisclosureGroup("What's waiting") {
                            ForEach(app.waiting) { change in
                                LabeledContent(change.summary) {
                                    Text(change.madeAt, format: .dateTime.hour().minute())
                                }
                                .font(.footnote)
                            }
                        }
                        .font(.footnote)
                    }
                }
                Spacer()
                Button(checking ? "Trying…" : "Try again") {
                    checking = true
                    Task {
                        await app.checkConnection()
                        checking = false
                    }
                }
                .disabled(checking)
            }
            .padding()
            .background(.thinMaterial)
            .accessibilityElement(children: .combine)
        }

        private var detail: String {
            switch app.waitingChanges {
            case 0: "The server can't be reached."
            case 1: "1 change will be sent when you're back online."
            default: "\(app.waitingChanges) changes will be sent when you're back online."
            }
        }
    }
#endif

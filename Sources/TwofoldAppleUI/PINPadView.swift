#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldAPI
    import TwofoldClient
    import TwofoldScreens

    /// Seed 001's PIN pad: dots for the digits typed, the app's own keys (no system keyboard),
    /// no sound or haptic per key, the biometric button where the flow allows it, and Cancel.
    /// Hidden in the app switcher and from screen capture (`privacySensitive`).
    struct PINPadView: View {
        let model: PINPadModel
        @Environment(\.dismiss) private var dismiss

        var body: some View {
            VStack(spacing: 24) {
                switch model.phase {
                case .starting, .working:
                    ProgressView()
                case .pad:
                    Text(model.prompt).font(.headline)
                    dots
                    if let problem = model.problem { ProblemText(problem) }
                    pad
                case .biometrics:
                    Text(model.prompt).multilineTextAlignment(.center)
                    if let problem = model.problem { ProblemText(problem) }
                    Button("Use Face ID or Touch ID", systemImage: "faceid") { Task { await model.useBiometrics() } }
                        .buttonStyle(.borderedProminent)
                case .done:
                    Label("Done", systemImage: "checkmark.circle.fill").font(.title2)
                    Button("Close") { dismiss() }
                case .over(let words):
                    Text(words).multilineTextAlignment(.center)
                    Button("Close") { dismiss() }
                }
            }
            .padding()
            .navigationTitle(model.title)
            .toolbar {
                // Between steps only: a request or a prompt that is out finishes first.
                if model.phase == .pad || model.phase == .biometrics {
                    Button("Cancel") { Task { await model.cancel() } }
                }
            }
            .privacySensitive()
            .hiddenInAppSwitcher()
            .task { await model.start() }
        }

        private var dots: some View {
            HStack(spacing: 12) {
                ForEach(0..<model.length, id: \.self) { index in
                    Image(systemName: index < model.entered ? "circle.fill" : "circle")
                }
            }
            .accessibilityElement(children: .ignore)
            .accessibilityLabel("\(model.entered) of \(model.length) digits entered")
        }

        private var pad: some View {
            Grid(horizontalSpacing: 24, verticalSpacing: 16) {
                ForEach([[1, 2, 3], [4, 5, 6], [7, 8, 9]], id: \.self) { row in
                    GridRow {
                        ForEach(row, id: \.self) { digit in key(digit) }
                    }
                }
                GridRow {
                    if model.offersBiometrics {
                        Button("Use Face ID or Touch ID", systemImage: "faceid") {
                            Task { await model.useBiometrics() }
                        }
                        .labelStyle(.iconOnly)
                    } else {
                        Color.clear.frame(width: 64, height: 64)
                    }
                    key(0)
                    Button("Delete", systemImage: "delete.left") { model.deleteDigit() }
                        .labelStyle(.iconOnly)
                        .frame(width: 64, height: 64)
                }
            }
        }

        private func key(_ digit: Int) -> some View {
            Button("\(digit)") { Task { await model.press(digit) } }
                .font(.title)
                .frame(width: 64, height: 64)
                .background(Circle().fill(.quaternary))
                .buttonStyle(.plain)
        }
    }

    /// Seed 001's flows on this phone, each opening the pad: the PIN set or changed, biometrics
    /// added (after the PIN, or first — the older order) or removed.
    struct PINAndBiometricsView: View {
        let screens: ScreenFactory
        let user: UserDTO

        var body: some View {
            List {
                link("Set a PIN", "number", .setPIN)
                link("Change Your PIN", "arrow.triangle.2.circlepath", .changePIN)
                link("Add Biometrics", "faceid", .addBiometrics)
                link("Add Biometrics, Prompt First", "faceid", .addBiometricsBiometricFirst)
                link("Remove Biometrics", "minus.circle", .removeBiometrics)
            }
            .navigationTitle("PIN and Biometrics")
        }

        private func link(_ title: String, _ image: String, _ kind: DeviceSecondFactorFlow.Kind) -> some View {
            NavigationLink {
                ModelHost({ screens.pinPad(kind, for: user) }) { PINPadView(model: $0) }
            } label: {
                Label(title, systemImage: image)
            }
        }
    }
#endif

#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldScreens

    /// Seed 000's backup codes on a `BackupCodesModel`: shown once, copied, shared or printed,
    /// and not left behind until the person says "I've saved these codes"; new codes replace
    /// the old.
    public struct BackupCodesView: View {
        @Bindable private var model: BackupCodesModel
        private let onDone: (@MainActor () -> Void)?
        @State private var confirmingNew = false

        /// The codes of `model`; `onDone` hears that the person saved them and left.
        public init(model: BackupCodesModel, onDone: (@MainActor () -> Void)? = nil) {
            self.model = model
            self.onDone = onDone
        }

        public var body: some View {
            List {
                if model.codes.isEmpty {
                    Section {
                        Text("Backup codes sign you in when you can't use your other methods. Each works once.")
                        Button("Make New Backup Codes") { confirmingNew = true }.disabled(model.working)
                    }
                } else {
                    codes
                }
                if let problem = model.problem {
                    Section { ProblemText(problem.message) }
                }
            }
            .navigationTitle("Backup Codes")
            .hiddenInAppSwitcher()
            .navigationBarBackButtonHidden(!model.canFinish)
            .interactiveDismissDisabled(!model.canFinish)
            .confirmationDialog("Make new backup codes?", isPresented: $confirmingNew, titleVisibility: .visible) {
                Button("Make New Codes", role: .destructive) { Task { await model.regenerate() } }
            } message: {
                Text("Your old codes will stop working.")
            }
        }

        @ViewBuilder private var codes: some View {
            Section {
                LazyVGrid(columns: [GridItem(.adaptive(minimum: 120))], spacing: 12) {
                    ForEach(model.codes, id: \.self) { code in
                        Text(code)
                            .font(.body.monospaced())
                            .textSelection(.enabled)
                    }
                }
                .padding(.vertical, 4)
                .accessibilityElement(children: .contain)
                .accessibilityLabel("\(model.codes.count) backup codes")
            } header: {
                Text("Save these codes")
            } footer: {
                Text("Keep them somewhere safe. Each works once, and you won't see them again.")
            }
            Section {
                Button("Copy Codes", systemImage: "doc.on.doc") { Clipboard.copy(model.text) }
                ShareLink(item: model.text, subject: Text("Twofold backup codes")) {
                    Label("Share or Print", systemImage: "square.and.arrow.up")
                }
            }
            Section {
                Toggle("I've saved these codes", isOn: $model.saved)
                Button("Done") {
                    model.finish()
                    onDone?()
                }
                .disabled(!model.canFinish)
            }
        }
    }

    #Preview("Backup codes") {
        NavigationStack { BackupCodesView(model: ScreenFixtures.backupCodes()) }
    }
#endif

#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldClient
    import TwofoldScreens

    /// Seed 000's authenticator setup wizard on an `AuthenticatorSetupModel`: what an
    /// authenticator app is, then the QR code (or the key to copy, or the app to open), the
    /// first code, and the backup codes when this was the first factor.
    public struct AuthenticatorSetupView: View {
        private let model: AuthenticatorSetupModel
        private let screens: ScreenFactory
        @Environment(\.dismiss) private var dismiss

        /// The wizard for `model`; `screens` makes the backup codes' model.
        public init(model: AuthenticatorSetupModel, screens: ScreenFactory) {
            (self.model, self.screens) = (model, screens)
        }

        public var body: some View {
            content.navigationTitle("Authenticator App").hiddenInAppSwitcher()
        }

        @ViewBuilder private var content: some View {
            switch model.step {
            case .intro:
                ContentUnavailableView {
                    Label("Use an authenticator app", systemImage: "lock.rotation")
                } description: {
                    Text(
                        "Apps such as Google Authenticator, Authy or 1Password make a new 6-digit code every "
                            + "30 seconds. You'll enter one when you sign in.")
                    if let problem = model.problem { ProblemText(problem.message) }
                } actions: {
                    Button("Start") { Task { await model.start() } }
                        .buttonStyle(.borderedProminent)
                        .disabled(model.working)
                }
            case .scan(let setup):
                scan(setup)
            case .done(let codes?):
                ModelHost({ screens.backupCodes(codes) }) { BackupCodesView(model: $0) { dismiss() } }
            case .done(nil):
                ContentUnavailableView {
                    Label("Authenticator app is on", systemImage: "checkmark.shield.fill")
                } description: {
                    Text("You'll enter a code from the app when you sign in.")
                } actions: {
                    Button("Done") { dismiss() }.buttonStyle(.borderedProminent)
                }
            }
        }

        private func scan(_ setup: AuthenticatorSetup) -> some View {
            Form {
                Section {
                    QRCodeImage(text: setup.otpauthURI)
                        .frame(maxWidth: 260)
                        .frame(maxWidth: .infinity)
                        .accessibilityLabel("QR code for your authenticator app")
                    if let url = URL(string: setup.otpauthURI) {
                        Link(destination: url) {
                            Label("Open in Authenticator App", systemImage: "arrow.up.forward.app")
                        }
                    }
                } header: {
                    Text("1. Scan with your authenticator app")
                }
                Section {
                    Text(model.secretForReading)
                        .font(.body.monospaced())
                        .textSelection(.enabled)
                        .accessibilityLabel("Secret key")
                    Button(
                        model.copied ? "Copied" : "Copy Secret Key",
                        systemImage: model.copied ? "checkmark" : "doc.on.doc"
                    ) {
                        // Kept off other devices' clipboards, and gone after two minutes.
                        if let secret = model.copySecret() { Clipboard.copy(secret, expiringAfter: 120) }
                    }
                } header: {
                    Text("Or enter this key")
                } footer: {
                    Text("This setup ends at \(setup.expiresAt.formatted(date: .omitted, time: .shortened)).")
                }
                Section("2. Enter the code the app shows") {
                    CodeInputView(
                        entry: model.code, feedback: model.feedback, isDisabled: model.working,
                        onType: { [model] text in Task { await model.type(text) } },
                        onPaste: { [model] text in Task { await model.type(text) } })
                    if let problem = model.problem { ProblemText(problem.message) }
                }
            }
        }
    }

    #Preview("Authenticator app") {
        NavigationStack {
            AuthenticatorSetupView(
                model: AuthenticatorSetupModel(security: ScreenFixtures.security()), screens: .preview())
        }
    }
#endif

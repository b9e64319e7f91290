#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldAPI
    import TwofoldScreens

    /// Seed 000's 2FA settings hub on a `SecurityHubModel`: whether two-step sign-in is on,
    /// each factor as the server has it, and the way to each setup.
    public struct SecurityHubView: View {
        private let model: SecurityHubModel
        private let screens: ScreenFactory
        @State private var confirmingRemoval = false

        /// The hub for `model`; `screens` makes the setup screens' models.
        public init(model: SecurityHubModel, screens: ScreenFactory) { (self.model, self.screens) = (model, screens) }

        public var body: some View {
            List {
                Section("Two-step sign-in") {
                    Label(
                        model.isProtected ? "On" : "Off",
                        systemImage: model.isProtected ? "checkmark.shield.fill" : "exclamationmark.shield.fill"
                    )
                    .foregroundStyle(model.isProtected ? Color.green : Color.orange)
                    .font(.headline)
                    if !model.headline.isEmpty {
                        Text(model.headline)
                            .foregroundStyle(model.backupCodesWarning == .noneLeft ? Color.red : Color.primary)
                    }
                    if model.backupCodesWarning == .noneLeft, let support = model.support {
                        Link("Contact Support", destination: support)
                    }
                }
                if let status = model.status { factors(status) }
                if let problem = model.problem {
                    Section { ProblemText(problem.message) }
                }
            }
            .navigationTitle("Security")
            .overlay { if model.working && model.status == nil { ProgressView() } }
            .refreshable { await model.load() }
            .onAppear { Task { await model.load() } }
            .confirmationDialog(
                "Turn off the authenticator app?", isPresented: $confirmingRemoval, titleVisibility: .visible
            ) {
                Button("Turn Off", role: .destructive) { Task { await model.removeAuthenticator() } }
            } message: {
                Text("This will reduce your account security. Are you sure?")
            }
        }

        @ViewBuilder private func factors(_ status: TwoFactorStatus) -> some View {
            Section("Authenticator app") {
                if status.totp.enabled {
                    LabeledContent("Status", value: "On")
                    if let since = status.totp.configuredAt {
                        LabeledContent("Set up", value: since.formatted(date: .abbreviated, time: .omitted))
                    }
                    Button("Turn Off Authenticator App", role: .destructive) { confirmingRemoval = true }
                        .disabled(model.working)
                } else {
                    NavigationLink("Set Up Authenticator App") {
                        ModelHost(screens.authenticatorSetup) { AuthenticatorSetupView(model: $0, screens: screens) }
                    }
                }
            }
            Section("Passkeys") {
                NavigationLink {
                    ModelHost(screens.passkeyList) { PasskeysView(model: $0, screens: screens) }
                } label: {
                    LabeledContent("Passkeys", value: "\(status.webauthn.credentials.count)")
                }
            }
            Section("Backup codes") {
                NavigationLink {
                    ModelHost({ screens.backupCodes() }) { BackupCodesView(model: $0) }
                } label: {
                    LabeledContent("Codes left", value: "\(status.backupCodes.remaining)")
                }
            }
            Section("Codes by text message and email") {
                channel(.sms, title: "Text message codes", status: status.sms)
                channel(.email, title: "Email codes", status: status.email)
            }
            Section("Remembered devices") {
                NavigationLink {
                    ModelHost(screens.rememberedDevices) { RememberedDevicesView(model: $0) }
                } label: {
                    LabeledContent("Devices that skip the second step", value: "\(status.trustedDevices.count)")
                }
            }
        }

        @ViewBuilder private func channel(
            _ method: FactorMethod, title: String, status: TwoFactorStatus.CodeChannel
        ) -> some View {
            if status.enabled {
                LabeledContent(title, value: status.maskedDestination ?? "On")
            } else {
                NavigationLink {
                    ModelHost({ screens.codeChannel(method) }) { CodeChannelSetupView(model: $0, screens: screens) }
                } label: {
                    LabeledContent(title, value: "Off")
                }
            }
        }
    }

    #Preview("Security") {
        NavigationStack { SecurityHubView(model: ScreenFixtures.securityHub(), screens: .preview()) }
    }
#endif

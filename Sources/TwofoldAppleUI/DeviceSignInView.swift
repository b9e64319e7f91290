#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldAPI
    import TwofoldScreens

    /// Seed 004's authentication screen on a `DeviceSignInModel`: the username, the phone's
    /// prompt over the server's challenge, and the SMS code when the key cannot sign or the
    /// phone is enrolled for SMS.
    public struct DeviceSignInView: View {
        @Bindable private var model: DeviceSignInModel
        private let onSignedIn: @MainActor (UserDTO) -> Void

        /// The screen for `model`; `onSignedIn` hears the signed-in user.
        public init(model: DeviceSignInModel, onSignedIn: @escaping @MainActor (UserDTO) -> Void) {
            self.model = model
            self.onSignedIn = onSignedIn
        }

        public var body: some View {
            Form {
                switch model.phase {
                case .username, .working:
                    username
                case .smsCode(let sentTo):
                    Section {
                        Text(sentTo ?? "Enter the code we texted you.")
                        CodeInputView(
                            entry: model.code,
                            onType: { [model] text in Task { await model.type(text) } },
                            onPaste: { [model] text in Task { await model.type(text) } })
                        Button("Verify") { Task { await model.submit() } }.disabled(!model.code.isComplete)
                    }
                    Section { Button("Start Over") { model.startOver() } }
                case .signedIn(let user):
                    Label("Signed in as \(user.username)", systemImage: "checkmark.seal.fill").foregroundStyle(.green)
                }
                if let message = model.message {
                    Section {
                        Text(message)
                        if let failure = model.failure, failure.laError != nil {
                            Text(failure.logText).font(.caption.monospaced()).foregroundStyle(.secondary)
                        }
                    }
                }
            }
            .navigationTitle("Sign In with This iPhone")
            .disabled(model.phase == .working)
            .overlay { if model.phase == .working { ProgressView() } }
            .onChange(of: model.phase) { _, phase in
                if case .signedIn(let user) = phase { onSignedIn(user) }
            }
        }

        @ViewBuilder private var username: some View {
            Section {
                TextField("Username", text: $model.username)
                    .textContentType(.username)
                    .textInputAutocapitalization(.never)
                    .autocorrectionDisabled()
                    .submitLabel(.go)
                    .onSubmit { Task { await model.signIn() } }
                Button("Sign In", systemImage: "faceid") { Task { await model.signIn() } }
                    .disabled(model.username.isEmpty)
            } footer: {
                Text("This iPhone's key signs the server's challenge after Face ID, Touch ID or your passcode.")
            }
            if model.offerSMS {
                Section {
                    Button("Text Me a Code Instead", systemImage: "message") { Task { await model.useSMS() } }
                }
            }
        }
    }

    #Preview("Sign in with this iPhone") {
        NavigationStack { DeviceSignInView(model: ScreenFixtures.deviceSignIn(), onSignedIn: { _ in }) }
    }
#endif

#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldAPI
    import TwofoldClient
    import TwofoldScreens

    /// Seed 003's login screen and seed 002's challenge on a `SignInModel`: the account name
    /// (marked `.username`, where the keyboard offers saved passwords) and password, "Sign in
    /// with a passkey", then the second step, and recovery at the end of the fallback chain.
    public struct SignInView: View {
        @Bindable private var model: SignInModel
        private let autofill: (any PasskeyAsserting)?
        private let onSignedIn: @MainActor (UserDTO) -> Void
        private let onDeviceSignIn: (@MainActor () -> Void)?
        private let onRecovery: @MainActor () -> Void
        private let support: URL?

        /// The screen for `model`; `autofill` offers passkeys in the keyboard's autofill bar while
        /// the credentials show; `onSignedIn` hears the signed-in user; `onDeviceSignIn` and
        /// `onRecovery` open seed 004's device sign-in and account recovery.
        public init(
            model: SignInModel, autofill: (any PasskeyAsserting)? = nil,
            onSignedIn: @escaping @MainActor (UserDTO) -> Void,
            onDeviceSignIn: (@MainActor () -> Void)? = nil, onRecovery: @escaping @MainActor () -> Void,
            support: URL? = nil
        ) {
            (self.model, self.autofill, self.support) = (model, autofill, support)
            (self.onSignedIn, self.onDeviceSignIn, self.onRecovery) = (onSignedIn, onDeviceSignIn, onRecovery)
        }

        public var body: some View {
            content
                .animation(.default, value: model.phase)
                .onChange(of: model.phase) { _, phase in
                    if case .signedIn(let user) = phase { onSignedIn(user) }
                }
                // The autofill request waits while the credentials show, and ends (the task
                // cancelled) when they go.
                .task(id: model.phase == .credentials) {
                    if model.phase == .credentials, let autofill {
                        await model.offerPasskeysInAutofill(using: autofill)
                    }
                }
        }

        @ViewBuilder private var content: some View {
            switch model.phase {
            case .credentials where model.isLockedOut:
                lockout
            case .credentials:
                credentials
            case .working where model.step == nil:
                credentials.disabled(true).overlay {
                    ProgressView("Signing in…").padding().background(.regularMaterial)
                }
            case .challenge, .working:
                ChallengeView(model: model, onRecovery: onRecovery)
            case .signedIn:
                ProgressView("Signed in")
            case .recovery:
                ContentUnavailableView {
                    Label("No other way to sign in", systemImage: "person.crop.circle.badge.questionmark")
                } description: {
                    Text("You've tried every way this account has. Account recovery can get you back in.")
                } actions: {
                    Button("Recover your account") { onRecovery() }.buttonStyle(.borderedProminent)
                    Button("Start over") { Task { await model.startOver() } }
                }
            }
        }

        /// Seed 000: the account locked, full screen, with its countdown and a way to support.
        private var lockout: some View {
            TimelineView(.periodic(from: .now, by: 1)) { _ in
                ContentUnavailableView {
                    Label("Account locked", systemImage: "lock.fill")
                } description: {
                    Text(model.lockoutMessage() ?? "You can try again now.")
                        .monospacedDigit()
                } actions: {
                    if let support {
                        Link("Contact Support", destination: support).buttonStyle(.borderedProminent)
                    }
                    Button("Recover your account") { onRecovery() }
                    Button("Back to sign in") { Task { await model.startOver() } }
                }
            }
        }

        private var credentials: some View {
            Form {
                Section {
                    TextField("Email or username", text: $model.name)
                        .textContentType(.username)
                        .keyboardType(.emailAddress)
                        .textInputAutocapitalization(.never)
                        .autocorrectionDisabled()
                        .submitLabel(.next)
                    SecureField("Password", text: $model.password)
                        .textContentType(.password)
                        .submitLabel(.go)
                        .onSubmit { Task { await model.signIn() } }
                }
                if let message = model.message {
                    Section { ProblemText(message) }
                }
                Section {
                    // Rate limited: the button waits for the time the server gave, counting down.
                    TimelineView(.periodic(from: .now, by: 1)) { _ in
                        Button(model.waitCountdown().map { "Sign in (\($0) s)" } ?? "Sign in") {
                            Task { await model.signIn() }
                        }
                        .frame(maxWidth: .infinity)
                        .disabled(!model.canSignIn)
                        .monospacedDigit()
                    }
                    Button("Sign in with a passkey", systemImage: "person.badge.key") {
                        Task { await model.signInWithPasskey() }
                    }
                    .frame(maxWidth: .infinity)
                    .accessibilityHint("Uses Face ID or Touch ID with a passkey saved for this account")
                }
                Section {
                    if let onDeviceSignIn {
                        Button("Sign in with this iPhone's key", systemImage: "iphone.gen3") { onDeviceSignIn() }
                    }
                    Button("Can't sign in? Recover your account") { onRecovery() }
                }
            }
        }
    }

    #Preview("Sign in") {
        SignInView(model: ScreenFixtures.signIn(), onSignedIn: { _ in }, onRecovery: {})
    }
#endif

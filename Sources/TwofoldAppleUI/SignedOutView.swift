#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldScreens

    /// The screens before a session: the sign-in (seeds 003 and 002), seed 004's sign-in with
    /// this phone's key, and account recovery (seed 000).
    struct SignedOutView: View {
        let screens: ScreenFactory
        @State private var path: [Route] = []

        private enum Route: Hashable {
            case deviceSignIn, recovery
        }

        var body: some View {
            NavigationStack(path: $path) {
                ModelHost(screens.signIn) { model in
                    SignInView(
                        model: model, autofill: screens.autofillPasskeys,
                        onSignedIn: { [app = screens.app, nudge = screens.passkeyNudge] user in
                            app.signedIn(user, with: model.passkeyName)
                            Task { await nudge.signedIn(username: user.username, with: model.method) }
                        },
                        onDeviceSignIn: { path.append(.deviceSignIn) }, onRecovery: { path.append(.recovery) },
                        support: ScreenFactory.supportURL())
                }
                .navigationTitle("Sign In")
                .onChange(of: screens.app.linkToShow, initial: true) { _, link in
                    if case .recovery? = link, path.last != .recovery { path.append(.recovery) }
                }
                .navigationDestination(for: Route.self) { route in
                    switch route {
                    case .deviceSignIn:
                        ModelHost(screens.deviceSignIn) { model in
                            DeviceSignInView(model: model) { [app = screens.app] in app.signedIn($0) }
                        }
                    case .recovery:
                        ModelHost({ [app = screens.app] in
                            let model = screens.recovery()
                            // Opened from the recovery email's link: its pass waits for the person to choose it.
                            if case .recovery(let token)? = app.linkToShow {
                                model.openLink(pass: token)
                                app.linkShown()
                            }
                            return model
                        }) { model in
                            RecoveryView(model: model) { [app = screens.app] in app.signedIn($0) }
                        }
                    }
                }
            }
        }
    }
#endif

#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldAPI
    import TwofoldScreens

    /// The protected screens, behind the auth guard: the account, the 2FA settings hub, this
    /// phone's enrolment and settings (seed 004), and the tabs the build adds (the testing
    /// build's dashboard). "Confirm it's you" shows over any of them when the server asks for it.
    struct HomeView: View {
        let screens: ScreenFactory
        let user: UserDTO
        /// This phone's enrolment, checked at launch and on every return to the foreground
        /// (seed 004 scenarios 8–10), whichever tab shows.
        @State private var phoneWatch: DeviceSettingsModel?
        @Environment(\.scenePhase) private var scenePhase

        var body: some View {
            TabView {
                NavigationStack { AccountView(screens: screens, user: user) }
                    .tabItem { Label("Account", systemImage: "person.crop.circle") }
                NavigationStack {
                    ModelHost(screens.securityHub) { SecurityHubView(model: $0, screens: screens) }
                }
                .tabItem { Label("Security", systemImage: "lock.shield") }
                NavigationStack { device }
                    .tabItem { Label("This iPhone", systemImage: "iphone.gen3") }
                ForEach(screens.moreTabs) { tab in
                    NavigationStack { tab.content() }
                        .tabItem { Label(tab.id, systemImage: tab.systemImage) }
                }
            }
            .sheet(isPresented: stepUpShown) { StepUpSheet(prompt: screens.stepUp) }
            .sheet(isPresented: nudgeShown) { PasskeyNudgeView(model: screens.passkeyNudge) }
            .sheet(isPresented: linkShown) { NavigationStack { linked } }
            .safeAreaInset(edge: .top) {
                if screens.app.isOffline {
                    OfflineBanner(app: screens.app)
                } else if let signedInWith = screens.app.signedInWith {
                    // Seed 000: "Signed in with <passkey name>", for a few seconds.
                    Label(signedInWith, systemImage: "person.badge.key")
                        .font(.subheadline).padding(8).frame(maxWidth: .infinity)
                        .background(.thinMaterial)
                        .accessibilityAddTraits(.isStaticText)
                        .task {
                            try? await Task.sleep(for: .seconds(4))
                            screens.app.signedInWithShown()
                        }
                }
            }
            .task { await screens.app.checkConnection() }
            .task {
                let watch = screens.deviceSettings(for: user)
                phoneWatch = watch
                await watch.check()
            }
            .onChange(of: scenePhase) { _, phase in
                if phase == .active, let phoneWatch { Task { await phoneWatch.check() } }
            }
            .modifier(OptionalSecurityChangeAlert(model: phoneWatch))
        }

        private var device: some View {
            List {
                NavigationLink {
                    ModelHost({ screens.enrollment(for: user) }) { EnrollmentView(model: $0) }
                } label: {
                    Label("Enroll This iPhone", systemImage: "key.horizontal")
                }
                NavigationLink {
                    ModelHost({ screens.approvals(for: user) }) { ApprovalView(model: $0) }
                } label: {
                    Label("Approve Sign-Ins", systemImage: "checkmark.shield")
                }
                NavigationLink {
                    ModelHost({ screens.deviceSettings(for: user) }) { DeviceSettingsView(model: $0) }
                } label: {
                    Label("Device Settings", systemImage: "gearshape")
                }
                NavigationLink {
                    PINAndBiometricsView(screens: screens, user: user)
                } label: {
                    Label("PIN and Biometrics", systemImage: "number.square")
                }
                NavigationLink {
                    ScanCodeScreen(app: screens.app)
                } label: {
                    Label("Scan a QR Code", systemImage: "qrcode.viewfinder")
                }
            }
            .navigationTitle("This iPhone")
        }

        /// Shown while the server's question waits; swiping it away cancels the change.
        /// Where a link opened in the app leads (seed 000's `twofold://settings/2fa/…`).
        @ViewBuilder private var linked: some View {
            switch screens.app.linkToShow {
            case .setUpAuthenticator?:
                ModelHost(screens.authenticatorSetup) { AuthenticatorSetupView(model: $0, screens: screens) }
            case .addPasskey?:
                ModelHost(screens.passkeyList) { PasskeysView(model: $0, screens: screens) }
            case .backupCodes?:
                ModelHost({ screens.backupCodes() }) { BackupCodesView(model: $0) }
            case .authenticator(let uri)?:
                Form {
                    Text(
                        "This link sets up an authenticator app for \(uri.account). Open it with your authenticator app; Twofold itself makes no codes."
                    )
                }
                .navigationTitle("Authenticator Link")
            default:
                ModelHost(screens.securityHub) { SecurityHubView(model: $0, screens: screens) }
            }
        }

        private var linkShown: Binding<Bool> {
            Binding(
                get: { [app = screens.app] in app.linkToShow != nil },
                set: { [app = screens.app] shown in if !shown { app.linkShown() } })
        }

        private var nudgeShown: Binding<Bool> {
            Binding(
                get: { [nudge = screens.passkeyNudge] in nudge.isShown },
                set: { [nudge = screens.passkeyNudge] shown in if !shown { nudge.maybeLater() } })
        }

        private var stepUpShown: Binding<Bool> {
            Binding(
                get: { [prompt = screens.stepUp] in prompt.question != nil },
                set: { [prompt = screens.stepUp] shown in if !shown { prompt.cancel() } })
        }
    }

    /// `SecurityChangeAlert` once the phone's enrolment has been read.
    private struct OptionalSecurityChangeAlert: ViewModifier {
        let model: DeviceSettingsModel?

        func body(content: Content) -> some View {
            if let model { content.modifier(SecurityChangeAlert(model: model)) } else { content }
        }
    }
#endif

#if canImport(SwiftUI) && os(iOS)
    import Combine
    import SwiftUI
    import TwofoldApple
    import TwofoldScreens
    import UIKit

    /// Seed 003's auth guard on `AppModel.screen`: nothing but a progress view while the kept
    /// session is read (no flash of the sign-in screen), a wait while the phone has not been
    /// unlocked since it started, the sign-in screens, the app lock, or the protected screens.
    public struct RootView: View {
        private let screens: ScreenFactory

        /// The app's root, on the objects `screens` holds.
        public init(screens: ScreenFactory) { self.screens = screens }

        private var app: AppModel { screens.app }

        public var body: some View {
            content
                .animation(.default, value: app.screen)
                .task { await app.launch() }
                .task { await app.checkIntegrity(JailbreakSigns()) }
                .alert(
                    "Security warning",
                    isPresented: Binding(
                        get: { app.integrityWarning != nil }, set: { if !$0 { app.integrityWarningSeen() } })
                ) {
                    Button("Continue Anyway") { app.integrityWarningSeen() }
                } message: {
                    Text(app.integrityWarning ?? "")
                }
                // A session that ends anywhere (a sign-out, a revoked session a call found
                // refused) leaves the protected screens; one signed in shows them.
                .task { await app.follow() }
                .onReceive(Self.notifications(UIApplication.willEnterForegroundNotification)) { _ in
                    app.didEnterForeground()
                    Task { await app.checkConnection() }
                }
                .onReceive(Self.notifications(UIApplication.protectedDataDidBecomeAvailableNotification)) { _ in
                    // The phone's first unlock: the kept session can be read now.
                    if app.screen == .waitingForStore { Task { await app.launch() } }
                }
        }

        private static func notifications(_ name: Notification.Name) -> NotificationCenter.Publisher {
            NotificationCenter.default.publisher(for: name)
        }

        @ViewBuilder private var content: some View {
            switch app.screen {
            case .launching:
                ProgressView()
            case .waitingForStore:
                ContentUnavailableView(
                    "Unlock your iPhone", systemImage: "lock.iphone",
                    description: Text("Twofold keeps your session safe until this iPhone has been unlocked."))
            case .signIn:
                SignedOutView(screens: screens)
            case .locked:
                LockedView(app: app)
            case .home(let user):
                HomeView(screens: screens, user: user)
            }
        }
    }

    #Preview("The app") {
        RootView(screens: .preview())
    }
#endif

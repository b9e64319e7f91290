#if canImport(UIKit) && canImport(UserNotifications) && os(iOS)
    import Foundation
    import TwofoldClient
    import UIKit
    import UserNotifications

    /// Apple's push service for "Approve on your phone" (issue Z): asks once to show alerts,
    /// registers the app, and gives the server the device token Apple hands back (through
    /// `PhoneApprovals.setPushToken`) once this phone's key is enrolled for a signed-in account.
    /// Without it the approval screen still learns of requests while it is open (its long poll).
    @MainActor public final class RemoteNotifications {
        public static let shared = RemoteNotifications()
        private var token: Data?
        private var approvals: PhoneApprovals?

        /// Asks to show alerts (once; iOS remembers the answer) and registers with Apple.
        public func register() async {
            let granted =
                (try? await UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .sound]))
            if granted == true { UIApplication.shared.registerForRemoteNotifications() }
        }

        /// The app delegate's `didRegisterForRemoteNotificationsWithDeviceToken`.
        public func received(token: Data) {
            self.token = token
            Task { await send() }
        }

        /// The approval screen's requests for the signed-in account, whose server learns the token.
        public func approvals(_ approvals: PhoneApprovals) {
            self.approvals = approvals
            Task { await send() }
        }

        private func send() async {
            guard let token, let approvals else { return }
            // Refused (signed out, or no key enrolled yet): the next sign-in or enrolment sends it.
            try? await approvals.setPushToken(token)
        }
    }

    /// The app's delegate for what SwiftUI does not carry: Apple's device token.
    public final class RemoteNotificationsDelegate: NSObject, UIApplicationDelegate {
        public func application(
            _ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data
        ) {
            MainActor.assumeIsolated { RemoteNotifications.shared.received(token: deviceToken) }
        }
    }
#endif

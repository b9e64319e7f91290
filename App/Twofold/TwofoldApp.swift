#if canImport(SwiftUI) && os(iOS)
    import Foundation
    import SwiftUI
    import TwofoldApple
    import TwofoldAppleUI
    import TwofoldClient

    #if TWOFOLD_TESTING
        import TwofoldAppleTestingUI
    #endif

    /// The iOS app: the SDK on the server the settings name, with the Keychain for the session
    /// and remembered devices, the Secure Enclave for this phone's key, LocalAuthentication for
    /// the app lock and the passkey sheet for passkeys; then the auth guard.
    @main
    struct TwofoldApp: App {
        /// Hands Apple's device token to `RemoteNotifications`.
        @UIApplicationDelegateAdaptor(RemoteNotificationsDelegate.self) private var delegate
        private let screens: ScreenFactory

        init() {
            // Named to the server, which shows its sessions as "Twofold for iPhone".
            let client = APIClient(baseURL: ServerAddress.url(), headers: ["User-Agent": "Twofold-iOS/1"])
            let keys = SecureEnclaveKeyStore()
            let passkeys = PasskeyAuthorization()
            screens = ScreenFactory(
                session: SessionManager(client: client, store: KeychainTokenStore()), device: keys,
                deviceID: Self.deviceID, gate: LocalAuthenticationGate(), passkeys: passkeys,
                autofillPasskeys: PasskeyAuthorization(autoFill: true), rememberedDevices: KeychainRememberedDevices(),
                keyStorage: keys.storage)
            #if TWOFOLD_TESTING
                // The testing build (App/project.yml's TwofoldTesting) only.
                screens.addTestingTab()
            #endif
        }

        var body: some Scene {
            WindowGroup {
                // Seed 000's links (`twofold://settings/2fa/…`, the recovery email's) and
                // `otpauth://` URIs, registered in App/project.yml.
                RootView(screens: screens).onOpenURL { [app = screens.app] url in app.open(url) }
            }
        }

        /// This phone's identifier, kept in the Keychain. It is first read by a device screen,
        /// which shows only once the session's store (as readable as the identifier) has been
        /// read; should the Keychain still refuse, this run uses one it does not keep rather
        /// than replace the kept one.
        private static func deviceID() -> String {
            (try? DeviceIdentifier.current()) ?? UUID().uuidString.lowercased()
        }
    }
#endif

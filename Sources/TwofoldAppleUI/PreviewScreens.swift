#if canImport(SwiftUI) && os(iOS)
    import Foundation
    import TwofoldScreens

    extension ScreenFactory {
        /// The app's objects for `#Preview`s: an SDK that reaches no network
        /// (`ScreenFixtures`), a phone whose keys cannot sign, no app lock and no passkeys.
        static func preview() -> ScreenFactory {
            ScreenFactory(
                session: ScreenFixtures.session(), device: ScreenFixtures.NoKeys(), deviceID: { "preview-phone" },
                gate: nil, passkeys: nil, rememberedDevices: nil, keyStorage: "Secure Enclave")
        }
    }
#endif

#if canImport(SwiftUI) && os(iOS)
    import SwiftUI

    /// Covers a screen that shows a secret (the authenticator app's setup key and QR code, the
    /// backup codes) whenever the app is not active, so the app switcher's snapshot, taken as
    /// the app leaves the foreground, shows the cover rather than the secret.
    struct HiddenInAppSwitcher: ViewModifier {
        @Environment(\.scenePhase) private var phase

        func body(content: Content) -> some View {
            content.overlay {
                if phase != .active {
                    ZStack {
                        Rectangle().fill(.background)
                        Label("Hidden while Twofold is in the background", systemImage: "eye.slash")
                            .foregroundStyle(.secondary)
                    }
                    .ignoresSafeArea()
                }
            }
        }
    }

    extension View {
        /// Covers this screen in the app switcher: for screens that show a secret.
        func hiddenInAppSwitcher() -> some View { modifier(HiddenInAppSwitcher()) }
    }
#endif

#if canImport(SwiftUI) && os(iOS)
    import UIKit
    import UniformTypeIdentifiers

    /// Copies secrets (an authenticator key, backup codes) for this phone only: never to the
    /// Universal Clipboard of the person's other devices, and, when asked, gone after a while.
    @MainActor
    enum Clipboard {
        static func copy(_ text: String, expiringAfter lifetime: TimeInterval? = nil) {
            var options: [UIPasteboard.OptionsKey: Any] = [.localOnly: true]
            if let lifetime { options[.expirationDate] = Date().addingTimeInterval(lifetime) }
            UIPasteboard.general.setItems([[UTType.utf8PlainText.identifier: text]], options: options)
        }
    }
#endif

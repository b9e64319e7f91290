#if canImport(SwiftUI) && os(iOS)
    import SwiftUI

    /// A tab a build adds after the app's own signed-in screens: the testing build's dashboard
    /// (`TwofoldAppleTestingUI`). A release build adds none.
    public struct MoreTab: Identifiable {
        /// The tab's title, which also tells tabs apart.
        public let id: String
        /// The SF Symbol the tab bar shows.
        public let systemImage: String
        /// The tab's screen.
        public let content: @MainActor () -> AnyView

        /// A tab titled `title` with the symbol `systemImage`, showing `content`.
        public init(title: String, systemImage: String, content: @escaping @MainActor () -> AnyView) {
            (id, self.systemImage, self.content) = (title, systemImage, content)
        }
    }
#endif

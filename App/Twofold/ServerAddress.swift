#if canImport(SwiftUI) && os(iOS)
    import Foundation

    /// The server the app talks to, read once at launch: the Settings app's "Server URL"
    /// (`serverURL`), else the build's `TwofoldServerURL`, else a server on this Mac.
    enum ServerAddress {
        /// The Settings bundle's key.
        static let settingsKey = "serverURL"
        /// The Info.plist key the build fills from `TWOFOLD_SERVER_URL`.
        static let infoKey = "TwofoldServerURL"
        private static let fallback = URL(string: "http://localhost:8080")!

        static func url(defaults: UserDefaults = .standard, bundle: Bundle = .main) -> URL {
            let candidates = [
                defaults.string(forKey: settingsKey), bundle.object(forInfoDictionaryKey: infoKey) as? String,
            ]
            return candidates.lazy.compactMap { $0.flatMap(parse) }.first ?? fallback
        }

        /// An `http` or `https` URL with a host; anything else (an empty field, an unexpanded
        /// build setting) is not a server.
        private static func parse(_ text: String) -> URL? {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let url = URL(string: trimmed), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host != nil
            else { return nil }
            return url
        }
    }
#endif

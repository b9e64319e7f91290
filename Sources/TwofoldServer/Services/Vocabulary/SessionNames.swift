import Foundation

/// What a person calls the thing a session was signed in on (issue W item 4): "Chrome on
/// Linux", "twofold CLI", "Twofold for iPhone", from the User-Agent it sent. A name is a guess
/// the sender controls, so it is shown as a label, never trusted.
enum SessionNames {
    static func name(_ userAgent: String?) -> String {
        guard let agent = userAgent?.trimmingCharacters(in: .whitespaces), !agent.isEmpty else {
            return "Unknown browser"
        }
        if agent.hasPrefix("twofold-cli") { return "twofold CLI" }
        if agent.hasPrefix("Twofold-iOS") { return "Twofold for iPhone" }
        if agent.hasPrefix("curl/") { return "curl" }
        guard let browser = browser(agent) else { return "Unknown app" }
        return system(agent).map { "\(browser) on \($0)" } ?? browser
    }

    private static func browser(_ agent: String) -> String? {
        // Most specific first: Edge and Opera also say Chrome, and Chrome also says Safari.
        let browsers: [(String, String)] = [
            ("Edg/", "Edge"), ("OPR/", "Opera"), ("Firefox/", "Firefox"), ("FxiOS/", "Firefox"),
            ("CriOS/", "Chrome"), ("Chrome/", "Chrome"), ("Safari/", "Safari"),
        ]
        return browsers.first { agent.contains($0.0) }?.1
    }

    private static func system(_ agent: String) -> String? {
        let systems: [(String, String)] = [
            ("iPhone", "iPhone"), ("iPad", "iPad"), ("Android", "Android"), ("CrOS", "ChromeOS"),
            ("Macintosh", "macOS"), ("Windows", "Windows"), ("Linux", "Linux"),
        ]
        return systems.first { agent.contains($0.0) }?.1
    }
}

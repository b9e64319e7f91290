import Foundation

extension TimeInterval {
    /// A wait as a person reads it, rounded up to its unit: "45 seconds", "5 minutes" (for 299
    /// seconds), "2 hours".
    var waitInWords: String {
        let seconds = Swift.max(1, Int(rounded(.up)))
        if seconds < 60 { return Self.count(seconds, "second") }
        if seconds < 3600 { return Self.count((seconds + 59) / 60, "minute") }
        return Self.count((seconds + 3599) / 3600, "hour")
    }

    /// How long this is, as a person reads it in a message: "5 minutes", "1 minute", "90 seconds",
    /// "2 hours". Answers and messages state the configured value this way, never a default.
    var inWords: String {
        let seconds = Int(rounded(.up))
        if seconds >= 3600, seconds % 3600 == 0 { return Self.count(seconds / 3600, "hour") }
        if seconds >= 60, seconds % 60 == 0 { return Self.count(seconds / 60, "minute") }
        return Self.count(seconds, "second")
    }

    /// "1 minute", "5 minutes".
    private static func count(_ value: Int, _ unit: String) -> String { "\(value) \(unit)\(value == 1 ? "" : "s")" }
}

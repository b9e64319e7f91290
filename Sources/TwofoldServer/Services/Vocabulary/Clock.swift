import Foundation

/// The server's notion of now, injected so tests set time explicitly instead of sleeping.
struct ServerClock: Sendable {
    let now: @Sendable () -> Date

    static let live = ServerClock { Date() }
}

/// The clock of `TWOFOLD_TEST_CLOCK_FILE`: the real time plus the seconds the file holds (none
/// while it is missing, empty or not a number). Read on every call: a test writes and the next
/// request sees it.
struct TestClockFile: Sendable {
    let path: String

    func now() -> Date {
        let text = FileManager.default.contents(atPath: path).flatMap { String(decoding: $0, as: UTF8.self) }
        let ahead = text.flatMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
        return Date().addingTimeInterval(ahead.isFinite ? ahead : 0)
    }
}

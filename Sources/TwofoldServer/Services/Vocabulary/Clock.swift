import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The server's notion of now, injected so tests set time explicitly instead of sleeping.
struct ServerClock: Sendable {
    let now: @Sendable () -> Date

    static let live = ServerClock { Date() }
}

/// The clock of `TWOFOLD_TEST_CLOCK_FILE`: the real time plus the seconds the file holds. Read on
/// every call (a test writes and the next request sees it), without blocking and at most 64
/// bytes of a regular file; a file that is missing, not regular, or not a number from 0 to a
/// hundred years leaves the clock at the real time (a test only moves time forward, and a time
/// far off would overflow the integer times the server writes).
struct TestClockFile: Sendable {
    let path: String

    static let furthest: TimeInterval = 100 * 365 * 86_400

    func now() -> Date {
        Date().addingTimeInterval(secondsAhead())
    }

    func secondsAhead() -> TimeInterval {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return 0 }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return 0 }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = read(descriptor, &bytes, bytes.count)
        guard count > 0 else { return 0 }
        let text = String(decoding: bytes.prefix(count), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let seconds = Double(text), seconds >= 0, seconds <= Self.furthest else { return 0 }
        return seconds
    }
}

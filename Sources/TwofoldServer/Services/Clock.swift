import Foundation

/// The server's notion of now, injected so tests set time explicitly instead of sleeping.
struct ServerClock: Sendable {
    let now: @Sendable () -> Date

    static let live = ServerClock { Date() }
}

import Foundation
import TwofoldAPI
import TwofoldClient

// The SDK's figures: what an app pays at launch (restoring the session, the guard's local
// check) and how many sign-ins a server answers when 50 SDK clients sign in at once.

/// Runs `body` `iterations` times after a warm-up; prints microseconds per call.
func measureAsync(_ name: String, iterations: Int, _ body: () async throws -> Void) async rethrows {
    let clock = ContinuousClock()
    for _ in 0..<max(1, iterations / 10) { try await body() }
    let start = clock.now
    for _ in 0..<iterations { try await body() }
    report(name, iterations: iterations, elapsed: clock.now - start)
}

func report(_ name: String, iterations: Int, elapsed: Duration) {
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    printFigure(name, perOperation: seconds / Double(iterations) * 1e6, perSecond: Double(iterations) / seconds)
}

/// One line of figures: microseconds per operation and operations per second.
func printFigure(_ name: String, perOperation: Double, perSecond: Double) {
    let name = name.padding(toLength: 44, withPad: " ", startingAt: 0)
    print("\(name) \(String(format: "%10.2f", perOperation)) µs/op  \(String(format: "%12.0f", perSecond)) op/s")
}

enum SDKBench {
    static let user = UserDTO(
        id: UUID(), username: "pat", email: "pat@example.com", phoneNumber: nil, role: "user", status: "active",
        createdAt: Date())
    static let session = StoredSession(
        accessToken: TokenDTO(token: String(repeating: "a", count: 400), expiresAt: Date().addingTimeInterval(900)),
        refreshToken: TokenDTO(token: String(repeating: "r", count: 43), expiresAt: Date().addingTimeInterval(86_400)),
        user: user, server: "http://127.0.0.1:9")
    /// Never reached: the local measures make no request.
    static let client = APIClient(baseURL: URL(string: "http://127.0.0.1:9")!)

    /// Session restore and the local token check (target: each under 1 ms).
    static func local() async throws {
        print("SDK (target: restore and local token check each under 1 ms)")
        let memory = MemoryTokenStore(session)
        try await measureAsync("restore a session (memory store)", iterations: 20_000) {
            let manager = SessionManager(client: client, store: memory)
            guard case .signedIn = await manager.restore() else { throw BenchFailure("not restored") }
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("twofold-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = FileTokenStore(file: folder.appendingPathComponent("session.json"))
        try file.save(session)
        try await measureAsync("restore a session (0600 file, as the CLI)", iterations: 5_000) {
            let manager = SessionManager(client: client, store: file)
            guard case .signedIn = await manager.restore() else { throw BenchFailure("not restored") }
        }
        let manager = SessionManager(client: client, store: memory)
        await manager.restore()
        try await measureAsync("local token check (accessToken, not due)", iterations: 200_000) {
            _ = try await manager.accessToken()
        }
    }

    /// `clients` SDK clients, each on an account of its own, sign in with the password over and
    /// over for `seconds`: each sign-in a new `SessionManager` and `SignInFlow`, as an app's
    /// first launch. Prints the sign-ins the server answered per second and their latency.
    static func load(server: URL, clients: Int, seconds: Int) async throws {
        let client = APIClient(baseURL: server)
        let password = "Bench-\(UUID().uuidString)"
        let prefix = "sdk" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let names = (0..<clients).map { "\(prefix)-\($0)" }
        for name in names {
            _ = try await client.send(
                API.Auth.register, RegisterRequest(username: name, email: "\(name)@example.com", password: password))
        }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(seconds)
        let start = clock.now
        let runs = await withTaskGroup(of: (latencies: [Duration], failures: Int).self) { group in
            for name in names {
                group.addTask {
                    var latencies: [Duration] = []
                    var failures = 0
                    while clock.now < deadline {
                        let began = clock.now
                        let session = SessionManager(client: client, store: MemoryTokenStore())
                        let state = await SignInFlow(client: client, session: session).signIn(name, password: password)
                        if case .signedIn = state { latencies.append(clock.now - began) } else { failures += 1 }
                    }
                    return (latencies, failures)
                }
            }
            return await group.reduce(into: [(latencies: [Duration], failures: Int)]()) { $0.append($1) }
        }
        let elapsed = clock.now - start
        let latencies = runs.flatMap(\.latencies).sorted()
        let failures = runs.reduce(0) { $0 + $1.failures }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(
            "\(clients) SDK clients signing in at once: \(String(format: "%.0f", Double(latencies.count) / seconds)) "
                + "sign-ins/s answered, p50 \(milliseconds(latencies, 0.5)) ms, p99 \(milliseconds(latencies, 0.99)) ms, "
                + "\(failures) not signed in (clients and server on the same cores)")
    }
}

/// The `quantile` of `sorted` latencies in milliseconds, one decimal; `-` for none.
func milliseconds(_ sorted: [Duration], _ quantile: Double) -> String {
    guard !sorted.isEmpty else { return "-" }
    let value = sorted[min(sorted.count - 1, Int(Double(sorted.count) * quantile))]
    return String(format: "%.1f", Double(value.components.attoseconds) / 1e15 + Double(value.components.seconds) * 1e3)
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

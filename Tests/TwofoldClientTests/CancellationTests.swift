import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport

/// A request cancelled on its way (a SwiftUI `.task` whose view went away) is a cancellation,
/// never "the server cannot be reached"; and cancelling one in flight is safe on Linux, where
/// Foundation's own cancel of a `URLSession` task crashed the process.
@Suite struct CancellationTests {
    /// A client for a server that takes the connection and never answers.
    static func hangingServer() throws -> (SilentListener, APIClient) {
        let listener = try SilentListener()
        return (listener, APIClient(baseURL: URL(string: "http://127.0.0.1:\(listener.port)")!))
    }

    @Test func aRequestCancelledInFlightThrowsCancellationError() async throws {
        let (listener, client) = try Self.hangingServer()
        defer { listener.close() }
        // At once, just after sending, and while waiting for the answer; many in parallel.
        try await withThrowingTaskGroup { group in
            for delay in 0..<200 {
                group.addTask {
                    let call = Task { try await client.send(API.Account.show, bearer: "token") }
                    try await Task.sleep(for: .milliseconds(delay % 50))
                    call.cancel()
                    await #expect(throws: CancellationError.self) { try await call.value }
                }
            }
            try await group.waitForAll()
        }
    }

    @Test func aRequestFromACancelledTaskIsNotSent() async throws {
        let (listener, client) = try Self.hangingServer()
        defer { listener.close() }
        let call = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.send(API.Account.show, bearer: "token")
        }
        await #expect(throws: CancellationError.self) { try await call.value }
    }

    @Test func aRefreshCancelledInFlightKeepsTheSessionAndIsNotOffline() async throws {
        let (listener, client) = try Self.hangingServer()
        defer { listener.close() }
        let stored = StoredSession(
            accessToken: TokenDTO(token: "access", expiresAt: Date(timeIntervalSinceNow: -10)),
            refreshToken: TokenDTO(token: "refresh", expiresAt: Date(timeIntervalSinceNow: 3600)),
            user: UserDTO(
                id: UUID(), username: "pat", email: "pat@example.com", phoneNumber: nil, role: "user",
                status: "active", createdAt: Date()),
            server: client.origin)
        let session = SessionManager(client: client, store: MemoryTokenStore(stored))
        _ = await session.restore()
        let call = Task { try await session.accessToken() }
        try await Task.sleep(for: .milliseconds(100))
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(await session.isOffline == false)
        #expect(await session.user?.username == "pat")
    }

    @Test func aSignInCancelledInFlightSaysCancelledNotOffline() async throws {
        let (listener, client) = try Self.hangingServer()
        defer { listener.close() }
        let flow = SignInFlow(client: client, session: SessionManager(client: client, store: MemoryTokenStore()))
        let call = Task { await flow.signIn("pat", password: "a long passphrase") }
        try await Task.sleep(for: .milliseconds(100))
        call.cancel()
        #expect(await call.value == .credentials(.cancelled))
    }
}

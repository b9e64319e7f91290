import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport

/// The SDK's three sign-outs against the built server: this device, the other devices (this one
/// stays), everywhere. Each other device finds out at its next refresh, which the server refuses.
@Suite struct SignOutScopeEndToEndTests {
    /// `name` signed in on a new session manager, as another device would be.
    static func device(_ server: ServerProcess, _ name: String) async throws -> SessionManager {
        let client = APIClient(baseURL: server.baseURL)
        let session = SessionManager(client: client, store: MemoryTokenStore())
        await session.signedIn(
            try await client.send(API.Auth.login, LoginRequest(username: name, password: TestAccounts.password)).tokens)
        return session
    }

    @Test func otherDevicesThenEverywhere() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-sign-out")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }
        let name = "sol-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
        _ = try await APIClient(baseURL: server.baseURL).send(
            API.Auth.register,
            RegisterRequest(username: name, email: "\(name)@example.com", password: TestAccounts.password))
        let phone = try await Self.device(server, name)
        let laptop = try await Self.device(server, name)
        let terminal = try await Self.device(server, name)

        try await phone.signOut(.otherDevices)
        #expect(phone.currentUser?.username == name, "this device stays signed in")
        _ = try await phone.refresh()
        for other in [laptop, terminal] {
            await #expect(throws: SessionError.signedOut) { try await other.refresh() }
            #expect(other.currentState == .signedOut)
        }

        let tablet = try await Self.device(server, name)
        try await phone.signOut(.everywhere)
        #expect(phone.currentState == .signedOut)
        await #expect(throws: SessionError.signedOut) { try await tablet.refresh() }
        let sessions = try await Self.device(server, name)
        let left = try await sessions.client.send(API.Auth.sessions, bearer: try await sessions.accessToken()).sessions
        #expect(left.count == 1 && left.first?.current == true, "only the sign-in made after it")
    }
}

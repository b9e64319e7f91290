import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport

/// The SDK's three sign-outs against the built server: this device, the other devices (this one
/// stays), everywhere. Each other device finds out at its next refresh, which the server refuses.
@Suite struct SignOutScopeEndToEndTests {
    @Test func otherDevicesThenEverywhere() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-sign-out")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }
        let name = "sol-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
        let client = APIClient(baseURL: server.baseURL)
        let phone = try await SDKAccounts.signedIn(client, name)
        let laptop = try await SDKAccounts.signedIn(client, name, register: false)
        let terminal = try await SDKAccounts.signedIn(client, name, register: false)

        try await phone.signOut(.otherDevices)
        #expect(phone.currentUser?.username == name, "this device stays signed in")
        _ = try await phone.refresh()
        for other in [laptop, terminal] {
            await #expect(throws: SessionError.signedOut) { try await other.refresh() }
            #expect(other.currentState == .signedOut)
        }

        let tablet = try await SDKAccounts.signedIn(client, name, register: false)
        try await phone.signOut(.everywhere)
        #expect(phone.currentState == .signedOut)
        await #expect(throws: SessionError.signedOut) { try await tablet.refresh() }
        let sessions = try await SDKAccounts.signedIn(client, name, register: false)
        let left = try await sessions.client.send(API.Auth.sessions, bearer: try await sessions.accessToken()).sessions
        #expect(left.count == 1 && left.first?.current == true, "only the sign-in made after it")
    }
}

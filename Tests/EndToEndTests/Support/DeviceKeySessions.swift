import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldDevice
import TwofoldTestSupport

/// A signed-in SDK session on a test server, for the device-key flows.
enum DeviceKeySessions {
    /// `name` signed in on a fresh session of `target`'s server.
    static func session(_ target: TestServers.Target, _ name: String) async throws -> SessionManager {
        let session = SessionManager(client: target.client, store: MemoryTokenStore())
        await session.signedIn(
            try await target.client.send(
                API.Auth.login, LoginRequest(username: name, password: TestAccounts.password)
            ).tokens)
        return session
    }
}

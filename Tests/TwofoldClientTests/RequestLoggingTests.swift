import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The client's logging hook: one record per request, naming the endpoint by its template, with
/// what came back; never a token, a password, a body or a header.
@Suite struct RequestLoggingTests {
    final class Collector: RequestLogging, @unchecked Sendable {
        // Safe: `records` is read and written under `lock`.
        private let lock = NSLock()
        private var kept: [RequestRecord] = []
        func log(_ record: RequestRecord) { lock.withLock { kept.append(record) } }
        var records: [RequestRecord] { lock.withLock { kept } }
    }

    /// Refuses the login with a problem document; answers anything else with success.
    struct Server: Transport {
        func send(_ request: URLRequest) async throws -> HTTPAnswer {
            guard request.url?.path.hasSuffix("/login") == true else {
                return HTTPAnswer(
                    status: 200, headers: ["Content-Type": "application/json"], body: Data(#"{"success":true}"#.utf8))
            }
            return HTTPAnswer(
                status: 401, headers: ["Content-Type": "application/problem+json"],
                body: Data(#"{"type":"about:blank","title":"No","status":401,"code":"invalid_credentials"}"#.utf8))
        }
    }

    @Test func everyRequestIsLoggedByItsTemplateWithNoSecret() async throws {
        let collector = Collector()
        let transport = Server()
        let client = APIClient(baseURL: URL(string: "http://twofold.test")!, transport: transport, logger: collector)
        await #expect(throws: APIError.self) {
            try await client.send(API.Auth.login, LoginRequest(username: "pat", password: "S3CRET-password"))
        }
        _ = try await client.send(API.Passkeys.delete, "credential-S3CRET", bearer: "S3CRET-token")
        let records = collector.records
        #expect(
            records.map(\.endpoint) == [
                "POST /api/v1/auth/login", "DELETE /api/v1/2fa/passkey/credentials/{credentialID}",
            ])
        #expect(records.map(\.outcome) == [.answered(status: 401), .answered(status: 200)])
        for record in records {
            #expect(!"\(record)".contains("S3CRET"), "\(record)")
        }
        #expect("\(records[0])".hasPrefix("POST /api/v1/auth/login → 401 in "))
    }

    @Test func aRequestWithNoAnswerIsLoggedAsFailedOrCancelled() async throws {
        let collector = Collector()
        let client = APIClient(
            baseURL: URL(string: "http://127.0.0.1:\(try Self.closedPort())")!, logger: collector)
        await #expect(throws: (any Error).self) { try await client.send(API.Account.show, bearer: "S3CRET") }
        let listener = try SilentListener()
        defer { listener.close() }
        let hanging = APIClient(baseURL: URL(string: "http://127.0.0.1:\(listener.port)")!, logger: collector)
        let call = Task { try await hanging.send(API.Account.show, bearer: "S3CRET") }
        try await Task.sleep(for: .milliseconds(100))
        call.cancel()
        _ = try? await call.value
        let outcomes = collector.records.map(\.outcome)
        #expect(outcomes.count == 2)
        if case .failed(let kind) = outcomes.first {
            #expect(kind.hasPrefix("URLError"))
        } else {
            Issue.record("\(outcomes)")
        }
        #expect(outcomes.last == .cancelled)
    }

    @Test func aRequestBuiltByHandIsLoggedByItsEndpointNotItsValues() async throws {
        let collector = Collector()
        let client = APIClient(baseURL: URL(string: "http://twofold.test")!, transport: Server(), logger: collector)
        _ = try await client.exchange(
            .delete, URL(string: "http://twofold.test/api/v1/2fa/passkey/credentials/S3CRET-id")!,
            body: NoContent?.none,
            bearer: nil)
        _ = try await client.exchange(
            .get, URL(string: "http://twofold.test/not/an/endpoint/S3CRET")!, body: NoContent?.none, bearer: nil)
        #expect(
            collector.records.map(\.endpoint) == [
                "DELETE /api/v1/2fa/passkey/credentials/{credentialID}", "GET (unlisted)",
            ])
    }

    /// A loopback port nothing listens on: a connection there is refused at once.
    static func closedPort() throws -> Int {
        let listener = try SilentListener()
        let port = listener.port
        listener.close()
        return port
    }
}

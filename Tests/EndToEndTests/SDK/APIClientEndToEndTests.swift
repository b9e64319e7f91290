import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport

/// `APIClient`, the project's one HTTP client, against the built server: every endpoint of
/// `API` built from its definition reaches its handler, and typed calls read typed answers and
/// typed refusals.
@Suite struct APIClientEndToEndTests {
    @Test func everyEndpointBuiltFromAPIReachesItsHandlerWithAnEscapedParameter() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-client")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }
        let client = APIClient(baseURL: server.baseURL)

        let registered = try await client.send(
            API.Auth.register,
            RegisterRequest(username: "pat", email: "pat@example.com", password: TestAccounts.password))
        #expect(registered.user.username == "pat")
        guard
            case .signedIn(let tokens) = try await client.send(
                API.Auth.login, LoginRequest(username: "pat", password: TestAccounts.password))
        else {
            Issue.record("a password-only account needs no second step")
            return
        }
        let token = tokens.accessToken.token

        // Every endpoint (but the one that would end this session) with a parameter that needs
        // escaping and an empty object: each answer comes from its handler or the middleware in
        // front of it, never from the router ("no resource at this path", "method not allowed").
        for endpoint in API.all where endpoint != API.Auth.logoutAll.erased {
            let answer = try await client.exchange(
                endpoint, "a b/ü?x%", body: endpoint.method == .get ? nil : Data("{}".utf8), bearer: token)
            #expect(
                !(answer.status == 404 && answer.text.contains("No resource lives at this path")),
                "\(endpoint): \(answer.text)")
            #expect(answer.status != 405 && answer.status < 500, "\(endpoint): \(answer.status) \(answer.text)")
        }

        // Typed answers and refusals.
        #expect(try await client.send(API.Account.show, bearer: token).username == "pat")
        do {
            _ = try await client.send(API.Auth.login, LoginRequest(username: "pat", password: "not the password"))
            Issue.record("a wrong password signed in")
        } catch let error as APIError {
            #expect(error.status == 401 && error.code == .invalidCredentials, "\(error)")
        }
        #expect(try await client.send(API.Auth.logoutAll, bearer: token).success)
        do {
            _ = try await client.send(API.Account.show, bearer: token)
            Issue.record("a session signed out everywhere still works")
        } catch let error as APIError {
            #expect(error.status == 401 && error.code == .unauthorized, "\(error)")
        }
    }
}

import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldSQLite
import VaporTesting

@testable import TwofoldServer

/// Account recovery: started, its messages read, reviewed and approved, redeemed.
enum RecoverySteps {
    /// The first bytes of a PNG file, and a little more.
    static let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])

    static func body(_ object: [String: Any]) -> ByteBuffer {
        ByteBuffer(data: try! JSONSerialization.data(withJSONObject: object))
    }

    /// Starts recovery for `email` from `address`; the answer's status and body.
    static func start(
        _ app: Application, _ email: String, message: String = "I lost my phone.", document: [String: String]? = nil,
        from address: String = "10.9.0.1"
    ) async throws -> (HTTPStatus, RecoveryStatus?, ProblemBody?) {
        let attached = try document.map {
            RecoveryDocument(contentType: try #require($0["contentType"]), data: try #require($0["data"]))
        }
        do {
            let started = try await app.client(from: address).send(
                API.Recovery.start, RecoveryStartRequest(email: email, message: message, document: attached))
            return (.accepted, started, nil)
        } catch let refused as APIError {
            return (HTTPStatus(statusCode: refused.status), nil, try Accounts.problem(refused))
        }
    }

    /// The messages delivered since the last call, to `destination`.
    static func messages(_ app: Application, clock: TestClock, to destination: String) async throws
        -> [OutgoingMessage]
    {
        try await Codes.deliverAll(app, clock: clock).filter { $0.destination == destination }
    }

    /// The 6-digit code in a recovery email.
    static func code(in message: OutgoingMessage) throws -> String {
        let range = try #require(message.body.range(of: "Your code is "))
        return String(message.body[range.upperBound...].prefix(6))
    }

    /// The `token` of the link to `page` in `message`.
    static func token(of page: Page, in message: OutgoingMessage) throws -> String {
        let range = try #require(message.body.range(of: "/\(page.path)?token="))
        return String(message.body[range.upperBound...].prefix { !$0.isWhitespace })
    }

    static func post(
        _ app: Application, _ path: String, _ object: [String: Any], headers: HTTPHeaders = .client("10.9.0.1")
    ) async throws -> (HTTPStatus, ByteBuffer) {
        var result: (HTTPStatus, ByteBuffer) = (.internalServerError, ByteBuffer())
        try await app.raw(.POST, path, headers: headers, body: body(object)) { response in
            result = (response.status, response.body)
        }
        return result
    }

    /// bob, with an authenticator app, starts recovery and proves his email; the request's id.
    static func pendingReview(
        _ app: Application, clock: TestClock, message: String = "I lost my phone.", document: [String: String]? = nil
    ) async throws -> (bob: AuthTokensResponse, id: UUID, cancel: String) {
        let bob = try await Accounts.signUp(app, "bob")
        _ = try await TOTPSteps.enable(app, tokens: bob, clock: clock)
        _ = try await messages(app, clock: clock, to: "bob@example.com")
        let (status, started, _) = try await start(app, "bob@example.com", message: message, document: document)
        #expect(status == .accepted)
        let id = try #require(started).recoveryId
        let mail = try #require(try await messages(app, clock: clock, to: "bob@example.com").first)
        _ = try await app.client(from: "10.9.0.1").send(
            API.Recovery.verifyEmail, "\(id)", CodeRequest(code: try code(in: mail)))
        return (bob, id, try token(of: Pages.recoveryCancel, in: mail))
    }

    /// An administrator (alice) who signed in a moment ago with her password.
    static func admin(_ app: Application) async throws -> AuthTokensResponse {
        try await Administrators.adminTokens(app)
    }

    static func approve(_ app: Application, _ id: UUID, admin: AuthTokensResponse, note: String = "Checked the ID.")
        async throws -> HTTPStatus
    {
        HTTPStatus(
            statusCode: try await status {
                try await app.client().send(
                    API.Admin.approveRecovery, "\(id)", RecoveryDecisionRequest(note: note),
                    bearer: admin.accessToken.token)
            })
    }

    /// A completed recovery, from bob's request to the pass used: the recovered session's token,
    /// and the request's "this wasn't me" token.
    static func recovered(_ app: Application, clock: TestClock) async throws -> (
        bob: AuthTokensResponse, session: String, cancel: String
    ) {
        let admin = try await Self.admin(app)
        let (bob, id, cancel) = try await Self.pendingReview(app, clock: clock)
        #expect(try await Self.approve(app, id, admin: admin) == .ok)
        let mail = try #require(
            try await Self.messages(app, clock: clock, to: "bob@example.com").first { $0.body.contains("approved") })
        let recovered = try await app.client(from: "10.9.0.1").send(
            API.Recovery.redeem, RecoveryRedeemRequest(pass: try Self.token(of: Pages.recoveryPass, in: mail)))
        return (bob, recovered.accessToken.token, cancel)
    }
}

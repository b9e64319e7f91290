import Foundation
import Testing
import TwofoldAPI
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
        var object: [String: Any] = ["email": email, "message": message]
        if let document { object["document"] = document }
        var result: (HTTPStatus, RecoveryStatus?, ProblemBody?) = (.internalServerError, nil, nil)
        try await app.testing().test(.POST, API.Recovery.start.path(), headers: .client(address), body: body(object)) {
            response in
            result =
                response.status == .accepted
                ? (response.status, try response.decode(RecoveryStatus.self), nil)
                : (response.status, nil, try response.problem())
        }
        return result
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
        try await app.testing().test(.POST, path, headers: headers, body: body(object)) { response in
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
        let (proven, _) = try await post(app, API.Recovery.verifyEmail.path("\(id)"), ["code": try code(in: mail)])
        #expect(proven == .ok)
        return (bob, id, try token(of: Pages.recoveryCancel, in: mail))
    }

    /// An administrator (alice) who signed in a moment ago with her password.
    static func admin(_ app: Application) async throws -> AuthTokensResponse {
        try await Administrators.adminTokens(app)
    }

    static func approve(_ app: Application, _ id: UUID, admin: AuthTokensResponse, note: String = "Checked the ID.")
        async throws -> HTTPStatus
    {
        try await post(
            app, API.Admin.approveRecovery.path("\(id)"), ["note": note], headers: .bearer(admin.accessToken.token)
        ).0
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
        let (status, body) = try await Self.post(
            app, API.Recovery.redeem.path(), ["pass": try Self.token(of: Pages.recoveryPass, in: mail)])
        #expect(status == .ok)
        return (bob, try decodeJSON(AuthTokensResponse.self, from: body).accessToken.token, cancel)
    }
}

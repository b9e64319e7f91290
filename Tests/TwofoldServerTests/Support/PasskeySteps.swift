import Foundation
import SQLKit
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice
import VaporTesting
import WebAuthn

@testable import TwofoldServer

/// A software passkey speaking to the test server (RP ID `localhost`, origin
/// `http://localhost:8080`, the development defaults).
struct Passkey {
    var authenticator: SoftwarePasskey

    init(
        flags: AuthenticatorData.Flags = [.userPresent, .userVerified], signCount: UInt32 = 1,
        credentialID: [UInt8] = Array(SecureRandom.bytes(32)), format: String = "none"
    ) {
        authenticator = SoftwarePasskey(
            rpID: "localhost", origin: "http://localhost:8080", credentialID: credentialID, flags: flags,
            signCount: signCount, format: format, aaguid: Array(repeating: 0xaa, count: 16))
    }

    var id: String { authenticator.id }

    /// The browser's answer to `options`; `change` may break the parts first.
    func registration(
        _ options: PasskeyCreationOptions, key: CBOR? = nil,
        change: (inout [UInt8], inout [UInt8]) -> Void = { _, _ in }
    ) -> RegistrationCredential {
        authenticator.registration(options, key: key, change: change)
    }

    /// An assertion over `challenge` (`SoftwarePasskey.assertion`), with `userHandle`'s user
    /// handle when given.
    mutating func assertion(
        _ challenge: String, userHandle: UUID? = nil, type: String = "webauthn.get", origin: String? = nil,
        rpID: String? = nil, change: (inout [UInt8], inout [UInt8], inout [UInt8]) -> Void = { _, _, _ in }
    ) throws -> AuthenticationCredential {
        try authenticator.assertion(
            challenge, userHandle: userHandle.map { Array(PasskeyService.userHandle($0)) }, type: type, origin: origin,
            rpID: rpID, change: change)
    }
}

/// HTTP calls of the passkey endpoints.
enum PasskeyCalls {
    struct Answer {
        let status: UInt
        let body: ByteBuffer

        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeJSON(T.self, from: body) }
        func problem() throws -> ProblemBody { try decodeJSON(ProblemBody.self, from: body) }
        var text: String { String(buffer: body) }
        /// The problem's code, its per-field messages, and the refusal's reason (`errors.credential`).
        var code: String? { try? problem().code }
        var errors: [String: String]? { (try? problem())?.errors }
        var reason: String? { errors?["credential"] }
    }

    static func call(
        _ app: Application, _ method: HTTPMethod, _ path: String, headers: HTTPHeaders = .client("10.0.0.1"),
        body: (any Encodable)? = nil
    ) async throws -> Answer {
        var answer: Answer?
        let buffer = try body.map { ByteBuffer(data: try Wire.encoder().encode($0)) }
        try await app.raw(method, path, headers: headers, body: buffer) { response in
            answer = Answer(status: response.status.code, body: response.body)
        }
        return try #require(answer)
    }

    static func post(
        _ app: Application, _ path: String, headers: HTTPHeaders = .client("10.0.0.1"), body: (any Encodable)? = nil
    ) async throws -> Answer {
        try await call(app, .POST, path, headers: headers, body: body)
    }

    /// Signs `name` up (a password only) and registers `passkey` for them.
    static func signUpWithPasskey(_ app: Application, _ passkey: Passkey, _ name: String = "alice") async throws
        -> AuthTokensResponse
    {
        let tokens = try await Accounts.signUp(app, name)
        try await register(app, token: tokens.accessToken.token, passkey)
        return tokens
    }

    /// Registers `passkey` for the holder of `token`; the answer must be 200.
    @discardableResult
    static func register(_ app: Application, token: String, _ passkey: Passkey, name: String? = nil) async throws
        -> PasskeyRegisteredResponse
    {
        let options = try await creationOptions(app, token: token)
        return try await app.client().send(
            API.Passkeys.registerVerify,
            PasskeyRegistrationRequest(credential: passkey.registration(options), name: name), bearer: token)
    }

    static func creationOptions(_ app: Application, token: String) async throws -> PasskeyCreationOptions {
        try await app.client().send(API.Passkeys.registerOptions, PasskeyRegistrationOptionsRequest(), bearer: token)
    }

    /// Signs in with the password; the login flow's answer (the account has a second factor).
    static func passwordStep(_ app: Application, _ name: String = "alice", address: String = "10.0.0.1")
        async throws -> LoginChallengeResponse
    {
        let outcome = try await app.client(from: address).send(
            API.Auth.login, LoginRequest(username: name, password: Accounts.password))
        let challenge: LoginChallengeResponse? =
            if case .secondStep(let challenge) = outcome { challenge } else { nil }
        return try #require(challenge, "\(name) signed in with the password alone")
    }

    /// Signs `name` in with the password and `passkey` as the second step; the access token.
    static func signInWithPasskey(
        _ app: Application, _ passkey: inout Passkey, _ name: String = "alice", address: String = "10.0.0.2"
    ) async throws -> String {
        let flow = try await passwordStep(app, name, address: address)
        let options = try await flowOptions(app, flow: flow.otpFlowId)
        return try await app.client().send(
            API.Passkeys.flowVerify,
            PasskeyFlowVerifyRequest(otpFlowId: flow.otpFlowId, credential: try passkey.assertion(options.challenge))
        ).accessToken.token
    }

    static func flowOptions(_ app: Application, flow: String) async throws -> PasskeyRequestOptions {
        try await app.client().send(API.Passkeys.flowOptions, PasskeyFlowOptionsRequest(tempToken: flow))
    }

    static func signInOptions(_ app: Application) async throws -> PasskeyRequestOptions {
        try await app.client().send(API.Passkeys.signInOptions)
    }

    /// The AMR of the session `token` belongs to.
    static func methods(_ app: Application, token: String) async throws -> [String]? {
        try await app.client().send(API.Auth.sessions, bearer: token).sessions.first { $0.current }?.methods
    }

    /// What a refused ceremony must leave as it was: sessions, passkeys and their counters and
    /// use times, used challenges, consumed login flows.
    static func state(_ app: Application) async throws -> [Int] {
        let sql = try #require(app.db as? any SQLDatabase)
        var values: [Int] = []
        for query in [
            "SELECT COUNT(*) AS n FROM sessions", "SELECT COUNT(*) AS n FROM passkey_credentials",
            "SELECT CAST(COALESCE(SUM(sign_count), 0) AS BIGINT) AS n FROM passkey_credentials",
            "SELECT COUNT(last_used_at) AS n FROM passkey_credentials",
            "SELECT COUNT(used_at) AS n FROM webauthn_challenges",
            "SELECT COUNT(consumed_at) AS n FROM login_flows",
        ] {
            let row = try await sql.raw(SQLQueryString(query)).first()
            values.append(try row?.decode(column: "n", as: Int.self) ?? -1)
        }
        return values
    }
}

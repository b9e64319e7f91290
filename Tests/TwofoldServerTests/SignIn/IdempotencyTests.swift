import Foundation
import SQLKit
import Testing
import TwofoldAPI
import VaporTesting

@testable import TwofoldServer

/// `Idempotency-Key` (API.md "Idempotent changes"), tried as a client retrying and as an
/// attacker would: the same key and request again get the first answer and change nothing;
/// another request under the key is refused; parallel requests with one key run once; keys are
/// the caller's; refusals are kept too; nothing readable is stored.
@Suite(.tags(.database)) struct IdempotencyTests {
    struct Answer {
        let status: UInt
        let body: String
        let replayed: Bool
    }

    static func send(
        _ app: Application, _ path: String, method: HTTPMethod = .POST, key: String?, body: [String: String],
        address: String = "10.0.0.1", bearer: String? = nil
    ) async throws -> Answer {
        var headers: HTTPHeaders = bearer.map { .bearer($0, from: address) } ?? .client(address)
        if let key { headers.add(name: Wire.Header.idempotencyKey, value: key) }
        var answer: Answer?
        try await app.raw(method, path, headers: headers, body: json(body)) { response in
            answer = Answer(
                status: response.status.code, body: response.body.string,
                replayed: response.headers.first(name: Wire.Header.idempotentReplayed) == "true")
        }
        return try #require(answer)
    }

    static func users(_ app: Application) async throws -> Int {
        try await AuditQueries.count(table: "users", on: app)
    }

    static let pat = ["username": "pat", "email": "pat@example.com", "password": Accounts.password]

    @Test func theSameRequestAgainGetsTheFirstAnswerAndChangesNothing() async throws {
        try await withTestApp { app in
            let key = "retry-0123456789"
            let first = try await Self.send(app, API.Auth.register.path(), key: key, body: Self.pat)
            #expect(first.status == 201 && !first.replayed)
            let again = try await Self.send(app, API.Auth.register.path(), key: key, body: Self.pat)
            #expect(again.status == 201 && again.replayed && again.body == first.body, "\(again.status) \(again.body)")
            #expect(try await Self.users(app) == 1)

            // Another request under the key: refused, nothing done.
            var other = Self.pat
            other["username"] = "pam"
            other["email"] = "pam@example.com"
            let misused = try await Self.send(app, API.Auth.register.path(), key: key, body: other)
            #expect(misused.status == 409 && misused.body.contains("another request"), "\(misused.body)")
            #expect(try await Self.users(app) == 1)

            // Without a key, or with a new one, the request runs.
            #expect(try await Self.send(app, API.Auth.register.path(), key: nil, body: Self.pat).status == 409)
            #expect(try await Self.send(app, API.Auth.register.path(), key: "new-key-42", body: other).status == 201)
            #expect(try await Self.users(app) == 2)
        }
    }

    /// A body naming a member twice is read by the handler with the first value; its fingerprint
    /// is its own bytes, never the canonical form of a body holding the last value (review:
    /// `bob` registered, then `carol` with the same key was answered with bob's replay).
    @Test func aBodyNamingAMemberTwiceHasAFingerprintOfItsOwn() {
        let twice = Data(#"{"username":"bob","password":"pw","username":"carol"}"#.utf8)
        let carol = Data(#"{"password":"pw","username":"carol"}"#.utf8)
        let reordered = Data(#"{"username":"carol", "password":"pw"}"#.utf8)
        #expect(IdempotencyMiddleware.canonical(twice) != IdempotencyMiddleware.canonical(carol))
        #expect(IdempotencyMiddleware.canonical(twice) == Array(twice))
        #expect(IdempotencyMiddleware.canonical(reordered) == IdempotencyMiddleware.canonical(carol))
    }

    @Test func keysAreTheCallers() async throws {
        try await withTestApp { app in
            let key = "shared-key-000"
            _ = try await Self.send(app, API.Auth.register.path(), key: key, body: Self.pat, address: "10.0.0.1")
            // The same key and request from another address runs again: it is not that caller's key
            // (and so meets the account the first one made).
            let elsewhere = try await Self.send(
                app, API.Auth.register.path(), key: key, body: Self.pat, address: "10.0.0.2")
            #expect(elsewhere.status == 409 && !elsewhere.replayed && elsewhere.body.contains("already registered"))

            // A signed-in caller's keys are the session's, whatever address the retry comes from.
            let tokens = try await Accounts.signUp(app, "alice")
            let first = try await Self.send(
                app, API.TwoFactor.totpSetup.path(), key: "totp-setup-1", body: [:], address: "10.0.0.3",
                bearer: tokens.accessToken.token)
            #expect(first.status == 200, "\(first.body)")
            let retried = try await Self.send(
                app, API.TwoFactor.totpSetup.path(), key: "totp-setup-1", body: [:], address: "10.0.0.4",
                bearer: tokens.accessToken.token)
            #expect(retried.replayed && retried.body == first.body, "the same pending secret, not a new one")
            // Another session of the same account gets no replay: a replay runs no policy check, so
            // a session that proved less must not be handed what this one was allowed.
            let login = try await Self.send(
                app, API.Auth.login.path(), key: nil,
                body: ["email": "alice@example.com", "password": Accounts.password], address: "10.0.0.5")
            let otherSession = try decodeJSON(AuthTokensResponse.self, from: ByteBuffer(string: login.body))
            let elsewhereSession = try await Self.send(
                app, API.TwoFactor.totpSetup.path(), key: "totp-setup-1", body: [:], address: "10.0.0.3",
                bearer: otherSession.accessToken.token)
            #expect(!elsewhereSession.replayed && elsewhereSession.body != first.body)
            // Another user's request under the same key is theirs alone.
            let bob = try await Accounts.signUp(app, "bob")
            let bobs = try await Self.send(
                app, API.TwoFactor.totpSetup.path(), key: "totp-setup-1", body: [:], address: "10.0.0.3",
                bearer: bob.accessToken.token)
            #expect(bobs.status == 200 && !bobs.replayed && bobs.body != first.body)
        }
    }

    @Test func parallelRequestsWithOneKeyRunOnce() async throws {
        try await withTestApp { app in
            let answers = try await withThrowingTaskGroup(of: Answer.self) { group in
                for _ in 0..<12 {
                    group.addTask {
                        try await Self.send(app, API.Auth.register.path(), key: "parallel-key", body: Self.pat)
                    }
                }
                return try await group.reduce(into: [Answer]()) { $0.append($1) }
            }
            #expect(answers.filter { $0.status == 201 && !$0.replayed }.count == 1)
            // The others were told to wait, or given the first answer; none registered again.
            #expect(answers.allSatisfy { ($0.status == 201) || ($0.status == 409 && $0.body.contains("still being")) })
            #expect(try await Self.users(app) == 1)
        }
    }

    @Test func aRefusalIsKeptSoARetryIsNotASecondGuess() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let flow = try await TOTPSteps.startLogin(app)
            let wrong = ["tempToken": flow, "code": "000000"]
            let first = try await Self.send(app, API.SecondStep.validateTOTP.path(), key: "wrong-code-1", body: wrong)
            #expect(first.status == 401 && first.body.contains("\"attemptsRemaining\":4"), "\(first.body)")
            let again = try await Self.send(app, API.SecondStep.validateTOTP.path(), key: "wrong-code-1", body: wrong)
            #expect(again.status == 401 && again.replayed && again.body == first.body)
            let next = try await Self.send(app, API.SecondStep.validateTOTP.path(), key: "wrong-code-2", body: wrong)
            #expect(next.body.contains("\"attemptsRemaining\":3"), "one guess was counted for the two sends")
        }
    }

    @Test func badKeysAreRefusedAndKeysExpireAfterADay() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            for key in ["short", String(repeating: "k", count: 256), "has space in it", "ünïcode-key"] {
                let refused = try await Self.send(app, API.Auth.register.path(), key: key, body: Self.pat)
                #expect(refused.status == 422 && refused.body.contains("Idempotency-Key"), "\(key)")
            }
            #expect(try await Self.users(app) == 0)
            _ = try await Self.send(app, API.Auth.register.path(), key: "day-old-key", body: Self.pat)
            clock.advance(by: Idempotency.lifetime + 1)
            let later = try await Self.send(app, API.Auth.register.path(), key: "day-old-key", body: Self.pat)
            #expect(later.status == 409 && !later.replayed, "a day later the key is new: the request runs")
        }
    }

    /// A claim its server never answered (it stopped mid-request) holds the key for a minute,
    /// not a day: then the request may be sent again and runs.
    @Test func aClaimLeftByAStoppedServerLapses() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            // What a server that died after claiming the key left behind: a claim, no answer.
            let body = try JSONSerialization.data(withJSONObject: Self.pat)
            let fingerprint =
                Array("POST /\(API.Auth.register.path())?\n".utf8) + IdempotencyMiddleware.canonical(body)
            guard
                case .run = try await app.twofold.idempotency.start(
                    key: "orphaned-key", scope: "address:10.0.0.1", fingerprint: fingerprint)
            else {
                Issue.record("the first claim did not run")
                return
            }
            let meanwhile = try await Self.send(app, API.Auth.register.path(), key: "orphaned-key", body: Self.pat)
            #expect(meanwhile.status == 409 && meanwhile.body.contains("still being"), "\(meanwhile.body)")
            clock.advance(by: Idempotency.lease + 1)
            let later = try await Self.send(app, API.Auth.register.path(), key: "orphaned-key", body: Self.pat)
            #expect(later.status == 201 && !later.replayed, "\(later.body)")
            #expect(try await Self.users(app) == 1)
        }
    }

    @Test func nothingReadableIsStored() async throws {
        try await withTestApp { app in
            _ = try await Accounts.signUp(app)
            let login = try await Self.send(
                app, API.Auth.login.path(), key: "login-key-1",
                body: ["email": "alice@example.com", "password": Accounts.password])
            #expect(login.status == 200 && login.body.contains("accessToken"))
            let sql = try #require(app.db as? any SQLDatabase)
            let rows = try await sql.raw("SELECT key_hash, request_hash, body_ciphertext FROM idempotent_requests")
                .all()
            #expect(rows.count == 1)
            for row in rows {
                for column in ["key_hash", "request_hash", "body_ciphertext"] {
                    let text = try row.decode(column: column, as: String.self)
                    #expect(!text.contains("login-key-1") && !text.contains("accessToken"))
                    #expect(!text.contains(Accounts.password))
                }
            }
            // And the sealed answer opens to the first one.
            let replay = try await Self.send(
                app, API.Auth.login.path(), key: "login-key-1",
                body: ["email": "alice@example.com", "password": Accounts.password])
            #expect(replay.replayed && replay.body == login.body)
        }
    }
}

import Foundation
import Testing
import TwofoldAPI
import VaporTesting

@testable import TwofoldServer

/// When sessions end: a rotated refresh token is recognised as reuse days later, and locking
/// the account ends its sessions.
@Suite(.tags(.database)) struct SessionEndTests {
    /// Item 7: a refresh token rotated by a thief is still recognised when the victim's app
    /// presents it days later, and the whole session ends.
    @Test func aRotatedRefreshTokenIsRecognisedDaysLater() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let victim = try await Accounts.signUp(app)
            var stolen: RefreshResponse?
            try await app.testing().test(
                .POST, API.Auth.refresh.path(), headers: .client("10.6.6.6"),
                body: json(["refreshToken": victim.refreshToken.token])
            ) { response in stolen = try response.decode(RefreshResponse.self) }
            clock.advance(by: 3 * 24 * 3600)
            try await app.twofold.housekeeping.sweep(now: clock.now)
            try await app.testing().test(
                .POST, API.Auth.refresh.path(), headers: .client("10.0.0.1"),
                body: json(["refreshToken": victim.refreshToken.token])
            ) { response in #expect(response.status == .unauthorized) }
            try await app.testing().test(
                .POST, API.Auth.refresh.path(), headers: .client("10.6.6.6"),
                body: json(["refreshToken": try #require(stolen).refreshToken.token])
            ) { response in #expect(response.status == .unauthorized, "the thief's family is revoked") }
            #expect(try await AuditQueries.count(type: "token.refresh_reused", on: app) == 1)
        }
    }

    /// Item 8: when wrong codes lock the account, its sessions end with it.
    @Test func lockingTheAccountEndsItsSessions() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            var locked = false
            for _ in 0..<30 where !locked {
                let flow = try await TOTPSteps.startLogin(app)
                for _ in 0..<5 where !locked {
                    let answer = try await TOTPSteps.validate(app, flow: flow, code: "000000")
                    locked = answer.1?.code == "account_locked"
                }
                clock.advance(by: 25 * 60)  // past the growing factor lock, inside the day
            }
            #expect(locked)
            try await app.testing().test(.GET, API.Account.show.path(), headers: .bearer(tokens.accessToken.token)) {
                response in #expect(response.status == .unauthorized, "the old access token is refused")
            }
            try await app.testing().test(
                .POST, API.Auth.refresh.path(), headers: .client("10.0.0.1"),
                body: json(["refreshToken": tokens.refreshToken.token])
            ) { response in #expect(response.status == .unauthorized, "and so is the refresh token") }
        }
    }
}

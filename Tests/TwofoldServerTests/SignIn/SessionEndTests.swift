import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
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
            let thief = app.client(from: "10.6.6.6")
            let stolen = try await thief.send(
                API.Auth.refresh, RefreshRequest(refreshToken: victim.refreshToken.token))
            clock.advance(by: 3 * 24 * 3600)
            try await app.twofold.housekeeping.sweep(now: clock.now)
            let victimsApp = try await refusal {
                try await app.client().send(API.Auth.refresh, RefreshRequest(refreshToken: victim.refreshToken.token))
            }
            #expect(victimsApp.status == 401)
            let thiefs = try await refusal {
                try await thief.send(API.Auth.refresh, RefreshRequest(refreshToken: stolen.refreshToken.token))
            }
            #expect(thiefs.status == 401, "the thief's family is revoked")
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
            let client = app.client()
            #expect(
                try await refusal { try await client.send(API.Account.show, bearer: tokens.accessToken.token) }.status
                    == 401, "the old access token is refused")
            #expect(
                try await refusal {
                    try await client.send(API.Auth.refresh, RefreshRequest(refreshToken: tokens.refreshToken.token))
                }.status == 401, "and so is the refresh token")
        }
    }
}

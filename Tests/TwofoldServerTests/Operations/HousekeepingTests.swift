import Fluent
import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import VaporTesting

@testable import TwofoldServer

@Suite(.tags(.database)) struct HousekeepingTests {
    @Test func anUnconfirmedTOTPSecretIsPurgedAfterTenMinutes() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await app.client().send(API.TwoFactor.totpSetup, bearer: tokens.accessToken.token)
            try await app.twofold.housekeeping.sweep(now: clock.now.addingTimeInterval(599))
            #expect(try await AuditQueries.count(table: "totp_credentials", on: app) == 1)
            try await app.twofold.housekeeping.sweep(now: clock.now.addingTimeInterval(600))
            #expect(try await AuditQueries.count(table: "totp_credentials", on: app) == 0)
        }
    }

    @Test func spentStateIsSweptAndLiveStateKept() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await app.client().send(API.Auth.refresh, RefreshRequest(refreshToken: tokens.refreshToken.token))
            #expect(try await AuditQueries.count(table: "refresh_tokens", on: app) == 2)
            try await app.twofold.housekeeping.sweep(now: clock.now.addingTimeInterval(3600))
            try await app.twofold.housekeeping.sweep(now: clock.now.addingTimeInterval(25 * 3600))
            #expect(
                try await AuditQueries.count(table: "refresh_tokens", on: app) == 2,
                "the used token stays for reuse detection until it would have expired")
            #expect(try await AuditQueries.count(table: "rate_limit_buckets", on: app) == 0)
            // Past their lifetime (30 days), used or not: swept by expiry alone.
            let lifetime = app.twofold.configuration.refreshTokenLifetime
            try await app.twofold.housekeeping.sweep(now: clock.now.addingTimeInterval(lifetime - 60))
            #expect(try await AuditQueries.count(table: "refresh_tokens", on: app) == 2)
            try await app.twofold.housekeeping.sweep(now: clock.now.addingTimeInterval(lifetime + 1))
            #expect(try await AuditQueries.count(table: "refresh_tokens", on: app) == 0, "an expired token goes")
        }
    }

    @Test func passkeyChallengesGoADayAfterTheyExpire() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            try await PasskeyCalls.register(app, token: tokens.accessToken.token, Passkey())
            _ = try await PasskeyCalls.signInOptions(app)
            #expect(try await AuditQueries.count(table: "webauthn_challenges", on: app) == 2)
            try await app.twofold.housekeeping.sweep(now: clock.now.addingTimeInterval(120 + 23 * 3600))
            #expect(try await AuditQueries.count(table: "webauthn_challenges", on: app) == 2)
            try await app.twofold.housekeeping.sweep(now: clock.now.addingTimeInterval(120 + 24 * 3600))
            #expect(try await AuditQueries.count(table: "webauthn_challenges", on: app) == 0)
            #expect(try await AuditQueries.count(table: "passkey_credentials", on: app) == 1, "the passkey stays")
        }
    }

    @Test func deviceChallengesGoADayAfterTheyExpire() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await DeviceKeySteps.enroll(app, token: tokens.accessToken.token, phone: .init())
            _ = try await DeviceKeySteps.challenge(app)
            try await app.twofold.housekeeping.sweep(now: clock.now.addingTimeInterval(300 + 23 * 3600))
            #expect(try await AuditQueries.count(table: "device_challenges", on: app) == 1)
            try await app.twofold.housekeeping.sweep(now: clock.now.addingTimeInterval(300 + 24 * 3600))
            #expect(try await AuditQueries.count(table: "device_challenges", on: app) == 0)
            #expect(try await AuditQueries.count(table: "devices", on: app) == 1, "the device stays")
        }
    }
}

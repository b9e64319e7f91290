import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldDevice
import VaporTesting

@testable import TwofoldServer

/// One definition of what can sign in (issue V item 2), and the anonymous doors answering alike
/// whoever knocks (items 4, 6 and 7): an SMS sign-in device is a second step, throttles count an
/// IPv6 /64 as one client, a device-key refusal does not tell a real device from none, and a
/// spent refresh token is reuse whatever `Idempotency-Key` it carries.
@Suite struct SignInDoorsTests {
    /// An account that holds `kind` alone (and, for backup codes, nothing they could stand in for).
    static func only(_ kind: SignInCredentials.Kind) -> SignInCredentials {
        var account = SignInCredentials(email: "alice@example.com")
        switch kind {
        case .totp: account.totpSecret = UUID()
        case .passkey: account.passkeyIDs = ["passkey"]
        case .deviceKey: account.deviceKeys = ["phone": "key"]
        case .smsDevice: (account.smsDeviceIDs, account.phone) = (["phone"], "+14155550123")
        case .smsCodes: (account.smsCodes, account.phone) = (true, "+14155550123")
        case .emailCodes: account.emailCodes = true
        case .backupCodes: account.backupCodes = 10
        }
        return account
    }

    /// Every reader agrees on every kind: the login flow's offer, the policy's second factors,
    /// the purge of a last factor and the recovery gate (`hasSecondFactor`), and what the policy
    /// asks before an addition. Backup codes alone are no door (they stand in for a factor).
    @Test(arguments: SignInCredentials.Kind.allCases)
    func everyReaderAgreesOnWhatCanSignIn(kind: SignInCredentials.Kind) {
        let account = Self.only(kind)
        let door = kind != .backupCodes
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(account.loginMethods(primary: nil).isEmpty == !door, "the login flow's offer")
        #expect(account.hasSecondFactor == door, "the policy, the purge and the recovery gate")
        #expect(account.secondFactorKinds.isSubset(of: Set(account.loginMethods(primary: nil))))
        let decision = SignInPolicy.decide(
            .add(kind: .webauthn), proof: SessionProof(proofs: [.password: now]), account: account, now: now,
            window: 300)
        #expect(decision == (door ? .stepUp(.recentSecondFactor) : .allowed), "what an addition needs")
    }

    /// The finding: on an account whose only method is an SMS sign-in device, the password alone
    /// started a full session. Now it starts a login flow whose second step is an SMS code.
    @Test func anSMSSignInDeviceIsTheSecondStepOfAPasswordSignIn() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            try await Accounts.verifyPhone(app, token: tokens.accessToken.token, clock: clock)
            let enrolled = try await DeviceKeySteps.enrollSMSDevice(app, token: tokens.accessToken.token)
            #expect(enrolled.0 == 200, "\(enrolled.1)")
            clock.advance(by: 61)
            _ = try await Codes.deliverAll(app, clock: clock)
            let outcome = try await app.client(from: "10.0.0.9").send(
                API.Auth.login, LoginRequest(username: "alice", password: Accounts.password))
            let challenge: LoginChallengeResponse? =
                if case .secondStep(let challenge) = outcome { challenge } else { nil }
            let flow = try #require(challenge, "a login flow, not a session")
            #expect(flow.availableMethods == [.sms])
            let code = try #require(try await Codes.deliverMessages(app, clock: clock).last)
            #expect(code.destination == "+14155550123")
            let (status, _) = try await Codes.verifyOTP(app, flow: flow.otpFlowId, code: code.code)
            #expect(status == 200)
        }
    }

    /// Item 4: one IPv6 host fills its /64 with addresses; they are one client to every
    /// per-address limit (here the sign-in's: 30, then one every 2 seconds).
    @Test func addressesOfOneIPv6Slash64ShareOneSignInLimit() async throws {
        try await withTestApp { app in
            var statuses: [Int] = []
            for index in 1...40 {
                let client = app.client(from: "2001:db8:5:7::\(String(index, radix: 16))")
                statuses.append(
                    try await status {
                        try await client.send(
                            API.Auth.login, LoginRequest(username: "nobody\(index)", password: "wrong password"))
                    })
            }
            #expect(statuses.prefix(30).allSatisfy { $0 == 401 })
            #expect(statuses.suffix(10).allSatisfy { $0 == 429 }, "\(statuses)")
            // Another /64 is another client.
            let refused = try await refusal {
                try await app.client(from: "2001:db8:5:8::1").send(
                    API.Auth.login, LoginRequest(username: "nobody", password: "wrong password"))
            }
            #expect(refused.status == 401)
        }
    }

    /// Item 7: a wrong signature for a real device and any signature for an unknown user get the
    /// same status and the same bytes.
    @Test func aDeviceKeyRefusalReadsTheSameForARealDeviceAndNone() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            let phone = SoftwareDeviceKey()
            #expect(try await DeviceKeySteps.enroll(app, token: tokens.accessToken.token, phone: phone).0 == 200)
            let challenge = try await DeviceKeySteps.challenge(app)
            let wrong = try SoftwareDeviceKey().sign(challenge: challenge.challenge)
            let real = try await DeviceKeySteps.verify(app, challenge, signature: wrong)
            let unknown = try await DeviceKeySteps.verify(app, challenge, signature: wrong, user: "nobody")
            #expect(real.0 == 401)
            #expect(real.0 == unknown.0)
            #expect(real.1 == unknown.1)
        }
    }

    /// Item 7 of "what to build": `Idempotency-Key` does not turn a spent refresh token's reuse
    /// into a replay of the live new pair; the session ends.
    @Test func aSpentRefreshTokenIsReuseWhateverIdempotencyKeyItCarries() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            var headers = HTTPHeaders.client("10.0.0.1")
            headers.add(name: Wire.Header.idempotencyKey, value: "refresh-key-0001")
            let body = json(["refreshToken": tokens.refreshToken.token])
            var first: RefreshResponse?
            try await app.raw(.POST, API.Auth.refresh.path(), headers: headers, body: body) {
                #expect($0.status == .ok)
                first = try $0.decode(RefreshResponse.self)
            }
            try await app.raw(.POST, API.Auth.refresh.path(), headers: headers, body: body) {
                #expect($0.status == .unauthorized)
                #expect($0.headers.first(name: Wire.Header.idempotentReplayed) == nil)
            }
            let reused = try await refusal {
                try await app.client().send(
                    API.Auth.refresh, RefreshRequest(refreshToken: try #require(first).refreshToken.token))
            }
            #expect(reused.status == 401, "reuse ended the session")
        }
    }
}

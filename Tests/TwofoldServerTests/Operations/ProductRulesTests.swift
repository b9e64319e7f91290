import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport
import VaporTesting

@testable import TwofoldServer

/// API.md's product rules are settings: read from the environment, checked, and obeyed.
@Suite struct ProductRulesTests {
    let cwd = URL(fileURLWithPath: "/srv/twofold")

    @Test func theDefaultsAreTheContracts() throws {
        let rules = try Configuration.load(from: [:], workingDirectory: cwd).rules
        #expect(rules.loginPerAddress == .init(burst: 30, refillSeconds: 2))
        #expect(rules.loginPerAccountAndAddress == .init(burst: 5, refillSeconds: 60))
        #expect(rules.loginPerAccount == .init(burst: 100, refillSeconds: 1))
        #expect(rules.registerPerAddress == .init(burst: 10, refillSeconds: 60))
        #expect(rules.lockAfterFailures == 5 && rules.firstLockout == 300 && rules.accountLockFailures == 20)
        #expect(rules.codeLifetime == 300 && rules.codeResendAfter == 60 && rules.codeSendsPerHour == 5)
        #expect(rules.loginFlowLifetime == 300 && rules.stepUpWindow == 300 && rules.deviceChallengeLifetime == 300)
        #expect(rules.trustedDeviceLifetime == 30 * 86_400 && rules.pendingTOTPLifetime == 600)
        #expect(rules.pinAttempts == 3 && rules.backupCodesWarnAt == 3)
    }

    @Test func everyRuleIsRead() throws {
        let rules = try Configuration.load(
            from: [
                "TWOFOLD_THROTTLE_LOGIN_PER_ADDRESS": "60/0.5",
                "TWOFOLD_THROTTLE_LOGIN_PER_ACCOUNT_AND_ADDRESS": "8/30",
                "TWOFOLD_THROTTLE_LOGIN_PER_ACCOUNT": "200/2", "TWOFOLD_THROTTLE_REGISTER_PER_ADDRESS": "1000/1",
                "TWOFOLD_THROTTLE_PASSWORD_CHANGE": "3/600", "TWOFOLD_LOCK_AFTER_FAILURES": "3",
                "TWOFOLD_LOCK_SECONDS": "60", "TWOFOLD_LOCK_LONGEST_SECONDS": "3600",
                "TWOFOLD_ACCOUNT_LOCK_FAILURES": "10", "TWOFOLD_CODE_LIFETIME_SECONDS": "600",
                "TWOFOLD_CODE_RESEND_SECONDS": "30", "TWOFOLD_CODE_SENDS_PER_HOUR": "10",
                "TWOFOLD_LOGIN_FLOW_SECONDS": "600", "TWOFOLD_STEP_UP_SECONDS": "120",
                "TWOFOLD_DEVICE_CHALLENGE_SECONDS": "60", "TWOFOLD_TRUSTED_DEVICE_DAYS": "7",
                "TWOFOLD_TOTP_PENDING_SECONDS": "900", "TWOFOLD_PIN_ATTEMPTS": "5", "TWOFOLD_BACKUP_CODES_WARN_AT": "2",
            ], workingDirectory: cwd
        ).rules
        #expect(rules.loginPerAddress == .init(burst: 60, refillSeconds: 0.5))
        #expect(rules.loginPerAccountAndAddress == .init(burst: 8, refillSeconds: 30))
        #expect(rules.loginPerAccount == .init(burst: 200, refillSeconds: 2))
        #expect(rules.registerPerAddress == .init(burst: 1000, refillSeconds: 1))
        #expect(rules.passwordChange == .init(burst: 3, refillSeconds: 600))
        #expect(rules.lockAfterFailures == 3 && rules.firstLockout == 60 && rules.longestLockout == 3600)
        #expect(rules.accountLockFailures == 10)
        #expect(rules.codeLifetime == 600 && rules.codeResendAfter == 30 && rules.codeSendsPerHour == 10)
        #expect(rules.loginFlowLifetime == 600 && rules.stepUpWindow == 120 && rules.deviceChallengeLifetime == 60)
        #expect(rules.trustedDeviceLifetime == 7 * 86_400 && rules.pendingTOTPLifetime == 900)
        #expect(rules.pinAttempts == 5 && rules.backupCodesWarnAt == 2)
    }

    static let badValues: [(String, String)] = [
        ("TWOFOLD_THROTTLE_REGISTER_PER_ADDRESS", "100"), ("TWOFOLD_THROTTLE_REGISTER_PER_ADDRESS", "0/60"),
        ("TWOFOLD_THROTTLE_LOGIN_PER_ADDRESS", "30/0"), ("TWOFOLD_THROTTLE_LOGIN_PER_ADDRESS", "30/nan"),
        ("TWOFOLD_THROTTLE_LOGIN_PER_ACCOUNT", "a/b"), ("TWOFOLD_THROTTLE_PASSWORD_CHANGE", "5/60/1"),
        ("TWOFOLD_LOCK_AFTER_FAILURES", "1"), ("TWOFOLD_LOCK_SECONDS", "5"), ("TWOFOLD_ACCOUNT_LOCK_FAILURES", "0"),
        ("TWOFOLD_CODE_LIFETIME_SECONDS", "10"), ("TWOFOLD_CODE_SENDS_PER_HOUR", "0"),
        ("TWOFOLD_STEP_UP_SECONDS", "1 hour"), ("TWOFOLD_TRUSTED_DEVICE_DAYS", "400"), ("TWOFOLD_PIN_ATTEMPTS", "0"),
    ]

    @Test("a rule out of its range names its variable", arguments: badValues)
    func aBadRuleNamesItsVariable(setting: (String, String)) {
        do {
            _ = try Configuration.load(from: [setting.0: setting.1], workingDirectory: cwd)
            Issue.record("accepted \(setting.0)=\(setting.1)")
        } catch {
            #expect(error.variable == setting.0)
            #expect(error.description.contains(setting.1.debugDescription), "\(error)")
        }
    }

    @Test func theLongestLockCannotBeShorterThanTheFirst() {
        #expect(throws: ConfigurationError.self) {
            try Configuration.load(
                from: ["TWOFOLD_LOCK_SECONDS": "3600", "TWOFOLD_LOCK_LONGEST_SECONDS": "600"], workingDirectory: cwd)
        }
    }

    /// `.env.example` has a line for every variable the server reads, and reads every one it lists.
    @Test func envExampleListsEveryVariable() throws {
        let root = BuildProducts.repositoryRoot
        let example = try String(contentsOf: root.appendingPathComponent(".env.example"), encoding: .utf8)
        let listed = Set(
            example.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: "=").first }
                .map(String.init))
        let folder = root.appendingPathComponent("Sources/TwofoldServer/Configuration")
        var read = Set<String>()
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: /"((?:TWOFOLD_|DATABASE_URL)[A-Z0-9_]*)"/) { read.insert(String(match.1)) }
        }
        #expect(read.subtracting(listed).isEmpty, "read but not in .env.example: \(read.subtracting(listed).sorted())")
        #expect(
            listed.subtracting(read).isEmpty, "in .env.example but never read: \(listed.subtracting(read).sorted())")
        // The values it shows are the defaults.
        var shown: [String: String] = [:]
        for line in example.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { shown[String(parts[0])] = String(parts[1]) }
        }
        #expect(try Configuration.load(from: shown, workingDirectory: cwd).rules == ProductRules())
    }

    // MARK: Obeyed

    /// An operator running an integration suite from one address raises the registration throttle.
    @Test func aRaisedRegistrationThrottleLetsMoreThrough() async throws {
        for (burst, expected) in [(10, 10), (40, 30)] {
            try await withTestApp(adjust: { $0.rules.registerPerAddress.burst = burst }) { app in
                let client = app.client(from: "10.9.9.9")
                var created = 0
                for index in 0..<30 {
                    let body = RegisterRequest(
                        username: "user\(index)", email: "user\(index)@example.com",
                        password: "correct horse battery staple")
                    // `status` gives 200 for a success: for a registration, its 201.
                    if try await status({ try await client.send(API.Auth.register, body) }) == 200 { created += 1 }
                }
                #expect(created == expected, "burst \(burst)")
            }
        }
    }

    /// Fewer wrong codes lock a factor, for the configured time.
    @Test func aLowerLockThresholdLocksSooner() async throws {
        let clock = TestClock()
        try await withTestApp(
            clock: clock,
            adjust: {
                $0.rules.lockAfterFailures = 3
                $0.rules.firstLockout = 60
            }
        ) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let flow = try await TOTPSteps.startLogin(app)
            var answers: [String] = []
            for _ in 0..<3 {
                answers.append(try await TOTPSteps.validate(app, flow: flow, code: "000000").1?.code ?? "")
            }
            #expect(answers == ["invalid_code", "invalid_code", "locked"], "\(answers)")
            clock.advance(by: 61)
            let right = try await TOTPSteps.validate(app, flow: flow, code: try TOTPSteps.code(secret, clock))
            #expect(right.0 == 200, "open again after the configured minute")
        }
    }

    /// The code lifetime and the step-up window follow their settings.
    @Test func lifetimesFollowTheirSettings() async throws {
        let clock = TestClock()
        try await withTestApp(
            clock: clock,
            adjust: {
                $0.rules.codeLifetime = 120
                $0.rules.codeResendAfter = 30
                $0.rules.stepUpWindow = 60
            }
        ) { app in
            let tokens = try await Accounts.signUp(app)
            let client = app.client()
            let sent = try await client.send(
                API.TwoFactor.smsSetup, SMSSetupRequest(phoneNumber: "+14155550123"), bearer: tokens.accessToken.token)
            #expect(sent.expiresAt == clock.now.addingTimeInterval(120))
            #expect(sent.nextAllowedAt == clock.now.addingTimeInterval(30))
            let message = try #require(try await Codes.deliverAll(app, clock: clock).last)
            #expect(message.body.contains("It expires in 2 minutes."), "\(message.body)")
            // A password-only account steps up with a sign-in inside the window: 61 s is outside.
            clock.advance(by: 61)
            let refused = try await refusal {
                try await client.send(
                    API.Account.changePhone, PhoneChangeRequest(phoneNumber: "+14155550124"),
                    bearer: tokens.accessToken.token)
            }
            #expect(refused.status == 403, "\(refused)")
            #expect(refused.problem?.detail?.contains("within 1 minute.") == true, "\(refused)")
        }
    }

    /// The PIN's attempts and the device challenge's lifetime follow their settings.
    @Test func deviceRulesFollowTheirSettings() async throws {
        try await withTestApp(
            adjust: {
                $0.rules.pinAttempts = 5
                $0.rules.deviceChallengeLifetime = 60
            }
        ) { app in
            let token = try await DeviceSecondFactorSteps.enrolled(app)
            #expect(try await DeviceKeySteps.challenge(app).expiresIn == 60)
            let set = try await DeviceSecondFactorSteps.setPIN(
                app, DevicePINChangeRequest(newPin: "4826"), token: token)
            #expect(set.0 == 200, "\(set.1)")
            for remaining in [4, 3, 2, 1] {
                let (status, body) = try await DeviceSecondFactorSteps.verifyPIN(app, "9999", token: token)
                #expect(status == 401 && body.contains(#""attemptsRemaining":\#(remaining)"#), "\(body)")
            }
            let (status, body) = try await DeviceSecondFactorSteps.verifyPIN(app, "9999", token: token)
            #expect(status == 403 && body.contains("pin_blocked"), "the fifth wrong PIN blocks it: \(body)")
        }
    }

    /// `backupCodesLow` turns on at the configured count.
    @Test func theBackupCodeWarningFollowsItsSetting() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock, adjust: { $0.rules.backupCodesWarnAt = 8 }) { app in
            let tokens = try await Accounts.signUp(app)
            let (_, codes) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            var low: [Bool?] = []
            for code in codes.prefix(2) {
                let flow = try await TOTPSteps.startLogin(app)
                let signedIn = try await app.client().send(
                    API.SecondStep.verifyBackupCode, BackupCodeVerifyRequest(otpFlowId: flow, backupCode: code))
                low.append(signedIn.backupCodesLow)
            }
            #expect(low == [false, true], "9 left is above 8; 8 left is at it")
        }
    }
}

import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice
import TwofoldTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Changes to an account on the built binary: email addresses are mailboxes only and a taken one
/// reads like a free one, a backup code sent twice on a step-up, challenges retired, and
/// passkey names that cannot mislead in a notice.
@Suite(.serialized) struct AccountChangesEndToEndTests {
    /// Item 14: an email address is an RFC 5321 mailbox, without characters that break headers.
    @Test func emailAddressesAreMailboxesOnly() async throws {
        try await TestServers.withTarget { target in
            let client = target.client
            for email in [
                "\"a b\"@example.com", "a<b>@example.com", "a(b)@example.com", "a,b@example.com", "a;b@example.com",
                "a:b@example.com", "a\\b@example.com", "a..b@example.com", ".a@example.com", "a@-example.com",
                "a@example", "a@exa_mple.com",
            ] {
                let refused = await refusal {
                    try await client.send(
                        API.Auth.register,
                        RegisterRequest(username: "mailtest", email: email, password: TestAccounts.password))
                }
                #expect(refused?.status == 422, "\(email): \(String(describing: refused))")
            }
            _ = try await client.send(
                API.Auth.register,
                RegisterRequest(
                    username: "mailtest", email: "o'brien+tag@mail.example.com", password: TestAccounts.password))
        }
    }

    /// An address another account uses is answered exactly like a free one: no one learns
    /// whose it is. Its owner is told and sent no code; the free address gets its code.
    @Test func aTakenEmailAddressIsAnsweredLikeAFreeOne() async throws {
        try await TestServers.withMailTarget(environment: ["TWOFOLD_CODE_RESEND_SECONDS": "10"]) { target, sink in
            let client = target.client
            let alice = try await target.register("alice")
            _ = try await target.register("bob")
            // The answers as they came: their members are compared.
            let taken = try await client.exchange(
                API.Account.changeEmail, EmailChangeRequest(email: "bob@example.com"), bearer: alice)
            let notices = { try sink.messages().filter { !TestServers.isVerification($0) } }
            let toBob = try await poll(notices) { $0.contains { $0.recipients == ["bob@example.com"] } }
            try target.server.advanceClock(by: 11)  // the resend wait, as after a free address
            let free = try await client.exchange(
                API.Account.changeEmail, EmailChangeRequest(email: "alice@new.example"), bearer: alice)
            #expect(taken.status == 202 && free.status == 202, "\(taken.text) \(free.text)")
            func members(_ response: HTTPAnswer) throws -> [String] {
                try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any]).keys.sorted()
            }
            #expect(try members(taken) == members(free))
            let told = try #require(toBob.first { $0.recipients == ["bob@example.com"] })
            #expect(
                TestServers.text(of: told).contains("Nothing changed")
                    && oneTimeCode(in: TestServers.text(of: told)) == nil)
            #expect(toBob.filter { $0.recipients == ["bob@example.com"] }.count == 1)
            let sent = try await poll({ try sink.messages() }) {
                $0.contains { $0.recipients == ["alice@new.example"] }
            }
            #expect(
                sent.contains {
                    $0.recipients == ["alice@new.example"] && oneTimeCode(in: TestServers.text(of: $0)) != nil
                })
        }
    }

    /// A backup code used for a step-up and sent again moments later (a double tap, a retried
    /// request) is `409 already_used`, not a wrong code counted towards a lock.
    @Test func aBackupCodeSentTwiceOnStepUpIsAlreadyUsed() async throws {
        try await TestServers.withTarget { target in
            let token = try await target.register("uma")
            let (secret, codes) = try await target.enableTOTP(token)
            let code = try #require(codes?.first)
            // A new session (a factor never confirms the session that added it).
            let client = target.client
            let flow = try await client.send(
                API.Auth.login, LoginRequest(username: "uma", password: TestAccounts.password)
            ).challenge
            let session = try await client.send(
                API.SecondStep.validateTOTP,
                TOTPValidateRequest(tempToken: flow.otpFlowId, code: try TestServers.Target.code(secret, offset: 30))
            ).accessToken.token
            let backup = StepUpRequest(method: .backup, code: code)
            _ = try await client.send(API.Auth.stepUp, backup, bearer: session)
            let again = await refusal { try await client.send(API.Auth.stepUp, backup, bearer: session) }
            #expect(again?.status == 409 && again?.code == .alreadyUsed, "\(String(describing: again))")
        }
    }

    /// One live step-up challenge per session purpose: asking again retires the last one, so a
    /// stolen session cannot pile up challenges; and one user asks for only so many at once,
    /// from however many addresses.
    @Test func aNewChallengeRetiresTheLastAndEachUserAsksForFew() async throws {
        let environment = ["TWOFOLD_TRUST_PROXY": "true", "TWOFOLD_THROTTLE_CHALLENGES_PER_USER": "10/60"]
        try await TestServers.withTarget(environment: environment) { target in
            let client = target.client
            let token = try await target.register("vera")
            let key = SoftwareDeviceKey()
            _ = try await client.send(
                API.DeviceKeys.enroll,
                DeviceEnrollRequest(
                    username: "vera", publicKey: key.publicKey, method: "secureEnclave", deviceId: "iphone-1"),
                bearer: token)
            let scenarios = DeviceKeyScenarios(server: target.server, gateway: target.gateway)
            let session = try await scenarios.signIn("vera", device: "iphone-1", key: key)
            // The answers as they came: the throttle's refusals are counted.
            func challenge(from address: String = "192.0.2.1") async throws -> HTTPAnswer {
                try await client.exchange(
                    API.Auth.stepUpDeviceKeyChallenge, StepUpDeviceKeyChallengeRequest(deviceId: "iphone-1"),
                    bearer: session, headers: ["X-Forwarded-For": address])
            }
            let first = try await client.read(challenge(), of: API.Auth.stepUpDeviceKeyChallenge)
            let second = try await client.read(challenge(), of: API.Auth.stepUpDeviceKeyChallenge)
            for (issued, expected) in [(first, 409), (second, 200)] {
                let stepped = try await client.exchange(
                    API.Auth.stepUp,
                    StepUpRequest(
                        method: .deviceKey, deviceId: "iphone-1", challengeId: issued.challengeId,
                        signature: try key.sign(challenge: issued.challenge)),
                    bearer: session)
                #expect(stepped.status == expected, "\(stepped.text)")
            }
            var statuses: [Int] = []
            for index in 0..<16 { statuses.append(try await challenge(from: "10.1.\(index).1").status) }
            #expect(statuses.filter { $0 == 429 }.count >= 6, "\(statuses)")
        }
    }

    /// A passkey's notice names its provider, when and from where it was added, never the name
    /// its adder chose; names refuse line and paragraph separators and bidirectional controls.
    @Test func passkeyNoticesNeverShowTheChosenNameAndNamesRefuseBidiControls() async throws {
        try await TestServers.withMailTarget { target, sink in
            guard let python = TestPython.find() else { return }
            let root = try BuildProducts.temporaryDirectory("twofold-e2e-notice")
            defer { try? FileManager.default.removeItem(at: root) }
            let authenticator = PasskeyCeremonies.Authenticator(
                python: python, directory: root, origin: "http://localhost:\(target.server.port)")
            let client = target.client
            let token = try await target.register("nina")
            // The options as the server wrote them, for the authenticator to read.
            let options = try await client.exchange(
                API.Passkeys.registerOptions, PasskeyRegistrationOptionsRequest(), bearer: token)
            let created = try authenticator.run("create", options: options.body, ["--library", "fido2"])
            let name = "Reset your password at evil.example"
            let passkey = try await client.send(
                API.Passkeys.registerVerify,
                PasskeyRegistrationRequest(
                    credential: try Wire.decoder().decode(RegistrationCredential.self, from: created), name: name),
                bearer: token
            ).credential

            let notices = try await poll({ try sink.messages() }) {
                $0.contains { TestServers.text(of: $0).contains("passkey") }
            }
            let notice = try #require(notices.first { TestServers.text(of: $0).contains("passkey") })
            let text = TestServers.text(of: notice)
            #expect(notice.recipients == ["nina@example.com"])
            #expect(!text.contains("evil.example"), "\(text)")
            #expect(text.contains("from 127.0.0.1"), "\(text)")

            for bad in ["evil\u{202E}txt.exe", "line\u{2028}break", "para\u{2029}", "iso\u{2066}late", "mark\u{200F}"] {
                let refused = await refusal {
                    try await client.send(
                        API.Passkeys.rename, passkey.id, PasskeyRenameRequest(name: bad), bearer: token)
                }
                #expect(refused?.status == 422, "\(bad.unicodeScalars.map { String($0.value, radix: 16) })")
            }
            let model = await refusal {
                try await client.send(
                    API.DeviceKeys.enroll,
                    DeviceEnrollRequest(
                        username: "nina", publicKey: SoftwareDeviceKey().publicKey, method: "secureEnclave",
                        deviceId: "p", deviceModel: "iPhone\u{202E}"),
                    bearer: token)
            }
            #expect(
                model?.status == 422 && model?.problem?.errors?["deviceModel"] != nil, "\(String(describing: model))")
        }
    }
}

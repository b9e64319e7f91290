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

/// Lockouts and throttles against strangers on the built binary (behind `TWOFOLD_TRUST_PROXY=true`
/// the last `X-Forwarded-For` hop is the client's address, so one test speaks from many
/// addresses): strangers lock only their own tries, cannot tell that an account exists, cannot
/// pick their address, and spend nothing of the owner's.
@Suite(.serialized) struct LockoutEndToEndTests {
    /// Item 3: a username alone can neither lock an account nor tell whether it exists.
    @Test func strangersCannotLockAnAccountOrTellThatItExists() async throws {
        // One token back an hour: a burst of 35 is all the address has, however slowly the test
        // runs (about 28 go before the last burst).
        try await TestServers.withTarget(environment: ["TWOFOLD_THROTTLE_LOGIN_PER_ADDRESS": "35/3600"]) { target in
            let client = target.client
            let token = try await target.register("lena")
            let (secret, _) = try await target.enableTOTP(token)
            // The answers as they came: a known and an unknown name must read the same, byte for
            // byte.
            var answers: Set<String> = []
            for _ in 0..<22 {
                let wrong = try await client.exchange(
                    API.DeviceKeys.verifyOTP, DeviceVerifyOTPRequest(username: "lena", otp: "000000"))
                #expect(wrong.status == 401)
                answers.insert(wrong.text)
            }
            let unknown = try await client.exchange(
                API.DeviceKeys.verifyOTP, DeviceVerifyOTPRequest(username: "nobody", otp: "000000"))
            answers.insert(unknown.text)
            #expect(answers.count == 1, "one answer for all: \(answers)")
            let fakeChallenge = UUID().uuidString
            let signature = try SoftwareDeviceKey().sign(challenge: Data(count: 32).base64EncodedString())
            let known = try await client.exchange(
                API.DeviceKeys.verifySignature,
                VerifySignatureRequest(
                    username: "lena", deviceId: "x", challengeId: fakeChallenge, signature: signature))
            let stranger = try await client.exchange(
                API.DeviceKeys.verifySignature,
                VerifySignatureRequest(
                    username: "nobody", deviceId: "x", challengeId: fakeChallenge, signature: signature))
            #expect(known.status == 401 && known.text == stranger.text)
            // The owner still signs in: nothing was counted against the account.
            let flow = try await client.send(
                API.Auth.login, LoginRequest(username: "lena", password: TestAccounts.password)
            ).challenge
            _ = try await client.send(
                API.SecondStep.validateTOTP,
                TOTPValidateRequest(tempToken: flow.otpFlowId, code: try TestServers.Target.code(secret, offset: 30)))
            // And the anonymous endpoints are throttled per address.
            var statuses: [Int] = []
            for _ in 0..<20 {
                statuses.append(
                    try await client.exchange(
                        API.DeviceKeys.verifyOTP, DeviceVerifyOTPRequest(username: "lena", otp: "1")
                    ).status)
            }
            #expect(statuses.contains(429), "\(statuses)")
        }
    }

    /// Item 4: behind one proxy that appends the peer (nginx), the client's own first hop does
    /// not choose the address the throttles see.
    @Test func behindAProxyTheClientCannotPickItsAddress() async throws {
        try await TestServers.withTarget(environment: ["TWOFOLD_TRUST_PROXY": "true"]) { target in
            _ = try await target.register("pat")
            var statuses: [Int] = []
            for index in 0..<12 {
                statuses.append(
                    try await target.client.exchange(
                        API.Auth.login, LoginRequest(username: "pat", password: "wrong password \(index)"),
                        headers: ["X-Forwarded-For": "198.51.100.\(index), 203.0.113.7"]
                    ).status)
            }
            #expect(statuses.filter { $0 == 401 }.count == 5, "\(statuses)")
            #expect(statuses.suffix(7).allSatisfy { $0 == 429 }, "\(statuses)")
        }
    }

    /// Item 9: the account's throttle holds whichever of its names is typed.
    @Test func theLoginThrottleIsTheAccountsWhateverNameIsTyped() async throws {
        try await TestServers.withTarget { target in
            _ = try await target.register("quinn")
            var statuses: [Int] = []
            for name in ["quinn", "QUINN", "quinn@example.com", "quinn", "quinn@example.com", "Quinn@Example.com"] {
                statuses.append(
                    try await target.client.exchange(
                        API.Auth.login, LoginRequest(username: name, password: "not the password")
                    ).status)
            }
            #expect(statuses == [401, 401, 401, 401, 401, 429], "\(statuses)")
        }
    }

    /// A stranger who knows the username asks for SMS sign-in codes from one address and
    /// guesses codes from many addresses of one IPv6 /64: they spend only their own budget, lock
    /// only their own tries (a locked try is answered exactly like a wrong code), and the
    /// owner, from their own address, still gets a code and signs in with it.
    @Test func strangersCannotLockTheOwnersSignInOrSpendItsCodes() async throws {
        let environment = [
            "TWOFOLD_TRUST_PROXY": "true", "TWOFOLD_CODE_RESEND_SECONDS": "10", "TWOFOLD_CODE_SENDS_PER_HOUR": "2",
        ]
        try await TestServers.withTarget(environment: environment) { target in
            let phone = "+14155550177"
            let password = try await target.register("olga")
            try await target.enableSMS(password, phone: phone)
            let recent = try await target.signInWithSMS("olga")
            let client = target.client
            _ = try await client.send(
                API.DeviceKeys.enroll, DeviceEnrollRequest(username: "olga", method: "smsOTP", deviceId: "old-phone"),
                bearer: recent)
            var delivered = try await TestServers.settled(target.gateway)

            func request(from address: String) async throws {
                _ = try await client.send(
                    API.DeviceKeys.requestOTP, RequestOTPRequest(username: "olga"),
                    headers: ["X-Forwarded-For": address])
            }
            // The answers as they came: locked or not, they must read the same.
            func verify(_ code: String, from address: String) async throws -> HTTPAnswer {
                try await client.exchange(
                    API.DeviceKeys.verifyOTP, DeviceVerifyOTPRequest(username: "olga", otp: code),
                    headers: ["X-Forwarded-For": address])
            }
            // The stranger asks three times (waiting out the resend wait): their budget is two.
            let stranger = (1...9).map { "2001:db8:7:1::\($0)" }
            for attempt in 0..<3 {
                if attempt > 0 { try target.server.advanceClock(by: 11) }
                try await request(from: stranger[0])
            }
            _ = try await TestServers.settled(target.gateway)
            let strangers = try target.gateway.messages().dropFirst(delivered).compactMap(\.code)
            #expect(strangers.count == 2, "the stranger's own budget: \(strangers)")
            delivered += strangers.count

            // Wrong guesses from across the /64: one answer throughout, locked or not.
            var answers: Set<String> = []
            for index in 1...6 {
                let wrong = try await verify(strangers.last == "000000" ? "111111" : "000000", from: stranger[index])
                #expect(wrong.status == 401)
                answers.insert(wrong.text)
            }
            #expect(answers.count == 1, "locked or not, one answer: \(answers)")
            let locked = try await verify(try #require(strangers.last), from: stranger[8])
            #expect(locked.status == 401 && answers.contains(locked.text), "their tries are locked: \(locked.text)")

            // The owner, from home: a code arrives (the budget was the stranger's) and works.
            try await request(from: "192.0.2.10")
            let owners = try #require(try await target.gateway.nextMessage(after: delivered)?.code)
            let signedIn = try await verify(owners, from: "192.0.2.10")
            #expect(signedIn.status == 200, "the owner is not locked out: \(signedIn.text)")
        }
    }

    /// A stranger's bad signatures on a device-key sign-in, from many addresses, lock nothing of
    /// the owner's: the owner's device signs in after them.
    @Test func strangersCannotLockTheOwnersDeviceKeySignIn() async throws {
        try await TestServers.withTarget(environment: ["TWOFOLD_TRUST_PROXY": "true"]) { target in
            let dora = try await target.register("dora")
            let client = target.client
            let key = SoftwareDeviceKey()
            _ = try await client.send(
                API.DeviceKeys.enroll,
                DeviceEnrollRequest(
                    username: "dora", publicKey: key.publicKey, method: "secureEnclave", deviceId: "iphone-1"),
                bearer: dora)
            /// A challenge for dora's device asked from `address`, signed with `signer`, sent back.
            func signIn(signedBy signer: SoftwareDeviceKey, from address: String) async throws -> HTTPAnswer {
                let from = ["X-Forwarded-For": address]
                let challenge = try await client.send(
                    API.DeviceKeys.initiate, DeviceRequest(username: "dora", deviceId: "iphone-1"), headers: from)
                return try await client.exchange(
                    API.DeviceKeys.verifySignature,
                    VerifySignatureRequest(
                        username: "dora", deviceId: "iphone-1", challengeId: challenge.challengeId,
                        signature: try signer.sign(challenge: challenge.challenge)),
                    headers: from)
            }
            let forger = SoftwareDeviceKey()
            for index in 0..<8 {
                #expect(try await signIn(signedBy: forger, from: "198.51.100.\(index + 1)").status == 401)
            }
            let owner = try await signIn(signedBy: key, from: "192.0.2.10")
            #expect(owner.status == 200, "the owner's device still signs in: \(owner.text)")
        }
    }

    /// Strangers guessing from many addresses fill the account's bucket, and then the owner's
    /// right password is refused too, but not from the owner's remembered device. The bucket
    /// counts failures only: many right passwords in a row never fill it.
    @Test func strangersCannotHoldARememberedDeviceOutAndRightPasswordsSpendNothing() async throws {
        let environment = ["TWOFOLD_TRUST_PROXY": "true", "TWOFOLD_THROTTLE_LOGIN_PER_ACCOUNT": "15/60"]
        try await TestServers.withTarget(environment: environment) { target in
            let client = target.client
            let token = try await target.register("rhea")
            let (secret, _) = try await target.enableTOTP(token)
            let flow = try await client.send(
                API.Auth.login, LoginRequest(username: "rhea", password: TestAccounts.password)
            ).challenge
            let trusted = try await client.send(
                API.SecondStep.validateTOTP,
                TOTPValidateRequest(
                    tempToken: flow.otpFlowId, code: try TestServers.Target.code(secret, offset: 30), trustDevice: true)
            )
            let device = try #require(trusted.trustedDeviceToken)

            func login(_ password: String, from address: String, device: String? = nil, name: String = "rhea")
                async throws -> Int
            {
                var headers = ["X-Forwarded-For": address]
                headers[Wire.Header.trustedDevice] = device
                return try await client.exchange(
                    API.Auth.login, LoginRequest(username: name, password: password), headers: headers
                ).status
            }
            var statuses: [Int] = []
            for index in 0..<25 { statuses.append(try await login("guess \(index)", from: "198.51.100.\(index + 1)")) }
            #expect(statuses.filter { $0 == 429 }.count >= 5, "\(statuses)")
            #expect(try await login(TestAccounts.password, from: "192.0.2.200") == 429, "the bucket is shut")
            #expect(
                try await login(TestAccounts.password, from: "192.0.2.201", device: device) == 200,
                "the remembered device is exempt")

            _ = try await target.register("sam")
            for index in 0..<30 {
                let status = try await login(TestAccounts.password, from: "203.0.113.\(index + 1)", name: "sam")
                #expect(status == 200, "sign-in \(index)")
                if status != 200 { break }
            }
        }
    }
}

import Crypto
import Foundation
import Testing
import TwofoldAPI
import TwofoldCore
import TwofoldDevice
import TwofoldTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue T, item 4: the other findings of the attacker's review, each tried over HTTP against the
/// built binary as the attacker would try it. Behind `TWOFOLD_TRUST_PROXY=true` the last
/// `X-Forwarded-For` hop is the client's address, so one test speaks from many addresses.
@Suite(.serialized) struct ReviewFindingsEndToEndTests {
    typealias Target = AttackEndToEndTests.Target

    /// A JSON body of any shape (nested objects, booleans), from `address` when given.
    static func send(
        _ target: Target, _ path: String, method: String = "POST", json: Any?, bearer: String? = nil,
        from address: String? = nil, headers: [String: String] = [:]
    ) async throws -> HTTP.Response {
        var request = HTTP.request(
            method, target.server.baseURL.appendingPathComponent(path),
            body: try json.map { try JSONSerialization.data(withJSONObject: $0) },
            contentType: json == nil ? nil : Wire.json)
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: Wire.Header.authorization) }
        if let address { request.setValue(address, forHTTPHeaderField: "X-Forwarded-For") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return try await HTTP.send(request)
    }

    /// The number of messages the gateway has once the delivery worker (which runs every
    /// second) has delivered everything queued: the count has not changed for two seconds.
    static func settled(_ gateway: SMSGateway) async throws -> Int {
        var count = try gateway.messages().count
        while true {
            try await Task.sleep(for: .seconds(2))
            let now = try gateway.messages().count
            if now == count { return count }
            count = now
        }
    }

    /// The bytes `text` encodes in base64url (the canonical form only, as the server reads it).
    static func unbase64URL(_ text: String) throws -> Data {
        Data(try #require(Base64URL.decode(text)))
    }

    /// A running server with an SMS gateway and a plain SMTP server that records every message.
    static func withMailTarget(
        environment extra: [String: String] = [:], _ body: (Target, SMTPSink) async throws -> Void
    ) async throws {
        guard let python = TestPython.find() else { return }
        let sink = try SMTPSink(python: python, security: "none")
        defer { sink.stop() }
        let environment = [
            "TWOFOLD_EMAIL_PROVIDER": "smtp", "TWOFOLD_SMTP_HOST": "127.0.0.1", "TWOFOLD_SMTP_PORT": String(sink.port),
            "TWOFOLD_SMTP_SECURITY": "none", "TWOFOLD_EMAIL_FROM": "no-reply@twofold.example",
        ].merging(extra) { $1 }
        try await AttackEndToEndTests.withTarget(environment: environment) { target in try await body(target, sink) }
    }

    /// A message's text as a person reads it: the body after the headers, decoded when sent
    /// as base64 (any non-ASCII body is).
    static func text(of message: SMTPSink.Message) -> String {
        let parts = message.data.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n\n")
        let headers = parts.first ?? ""
        let body = parts.dropFirst().joined(separator: "\n\n")
        guard headers.contains("Content-Transfer-Encoding: base64"),
            let data = Data(base64Encoded: body.filter { !$0.isWhitespace })
        else { return body }
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: WebAuthn parsing

    /// A CBOR map of 11,000 keys (the last one a duplicate) as an attestation object is refused
    /// by the cap on entries (256) before any key is compared; before the fix each such request
    /// compared every key with every earlier one, for seconds, on the event loop. An oversized
    /// `authData` is refused by its own cap. A health check answers while eight bombs arrive
    /// together.
    @Test func anElevenThousandKeyAttestationIsRefusedInMilliseconds() async throws {
        try await AttackEndToEndTests.withTarget(environment: ["TWOFOLD_MAX_BODY_BYTES": "262144"]) { target in
            let token = try await target.register("cora")
            var wide: [UInt8] = [0xB9, 0x2A, 0xF8]  // a map of 11,000 entries
            for key in 0..<10_999 { wide += [0x19, UInt8(key >> 8), UInt8(key & 0xFF), 0xF6] }
            wide += [0x19, 0x00, 0x00, 0xF6]  // key 0 again
            var deep: [UInt8] = Array(repeating: 0x81, count: 5000) + [0xF6]  // arrays nested 5,000 deep
            deep.insert(contentsOf: [0xA1, 0x63] + Array("fmt".utf8), at: 0)
            let bigAuthData: [UInt8] =
                [0xA3, 0x63] + Array("fmt".utf8) + [0x64] + Array("none".utf8) + [0x67] + Array("attStmt".utf8)
                + [0xA0, 0x68] + Array("authData".utf8) + [0x5A, 0x00, 0x00, 0x4E, 0x20]
                + Array(repeating: 0x41, count: 20_000)

            func register(_ attestation: [UInt8]) async throws -> HTTP.Response {
                let options = try await Self.send(target, API.Passkeys.registerOptions.path(), json: nil, bearer: token)
                #expect(options.status == 200, "\(options.text)")
                let challenge = try HTTP.decoder.decode(PasskeyCreationOptions.self, from: options.body).challenge
                let clientData =
                    #"{"type":"webauthn.create","challenge":"\#(challenge)","origin":"http://localhost:\#(target.server.port)"}"#
                let credential: [String: Any] = [
                    "id": "AAAAAAAAAAAAAAAA", "rawId": "AAAAAAAAAAAAAAAA", "type": "public-key",
                    "response": [
                        "clientDataJSON": Base64URL.encode(Array(clientData.utf8)),
                        "attestationObject": Base64URL.encode(attestation),
                    ],
                ]
                return try await Self.send(
                    target, API.Passkeys.registerVerify.path(), json: ["credential": credential, "name": "bomb"],
                    bearer: token)
            }

            let clock = ContinuousClock()
            for (name, attestation) in [("wide", wide), ("deep", deep), ("big authData", bigAuthData)] {
                var answer: HTTP.Response?
                let elapsed = try await clock.measure { answer = try await register(attestation) }
                let refused = try #require(answer)
                #expect(refused.status == 422, "\(name): \(refused.text)")
                if let why = ["wide": "at most 256", "big authData": "at most 16384"][name] {
                    #expect(refused.text.contains(why), "\(name): \(refused.text)")
                }
                #expect(refused.header("Content-Type")?.hasPrefix("application/problem+json") == true)
                // The cap's own message shows what refused it; the time, loosely (the whole suite
                // shares two cores), that nothing walked the 11,000 keys pairwise.
                #expect(elapsed < .seconds(5), "\(name) took \(elapsed)")
            }

            // Eight at once, each on a live challenge of its own account so that it reaches the
            // CBOR reader, and meanwhile the health check.
            var bombs: [URLRequest] = []
            for index in 0..<8 {
                let owner = try await target.register("cora\(index)")
                let options = try await Self.send(target, API.Passkeys.registerOptions.path(), json: nil, bearer: owner)
                let challenge = try HTTP.decoder.decode(PasskeyCreationOptions.self, from: options.body).challenge
                let clientData =
                    #"{"type":"webauthn.create","challenge":"\#(challenge)","origin":"http://localhost:\#(target.server.port)"}"#
                var request = HTTP.request(
                    "POST", target.server.baseURL.appendingPathComponent(API.Passkeys.registerVerify.path()),
                    body: try JSONSerialization.data(withJSONObject: [
                        "credential": [
                            "id": "AAAA", "rawId": "AAAA", "type": "public-key",
                            "response": [
                                "clientDataJSON": Base64URL.encode(Array(clientData.utf8)),
                                "attestationObject": Base64URL.encode(wide),
                            ],
                        ]
                    ]), contentType: "application/json")
                request.setValue("Bearer \(owner)", forHTTPHeaderField: "Authorization")
                bombs.append(request)
            }
            let healthRequest = HTTP.request(
                "GET", target.server.baseURL.appendingPathComponent(API.Operations.health.path()))
            let started = clock.now
            let health = try await withThrowingTaskGroup(of: Duration?.self) { [bombs] group in
                for bomb in bombs {
                    group.addTask {
                        let answer = try await HTTP.send(bomb)
                        #expect(answer.status == 422 && answer.text.contains("at most 256"), "\(answer.text)")
                        return nil
                    }
                }
                group.addTask {
                    try await Task.sleep(for: .milliseconds(20))
                    let asked = clock.now
                    let answer = try await HTTP.send(healthRequest)
                    #expect(answer.status == 200)
                    return clock.now - asked
                }
                var health: Duration?
                for try await value in group { health = value ?? health }
                return health
            }
            #expect(try #require(health) < .seconds(5), "health waited \(String(describing: health))")
            #expect(clock.now - started < .seconds(20))
            // Nothing was registered.
            let list = try await Self.send(target, API.Passkeys.list.path(), method: "GET", json: nil, bearer: token)
            #expect(try HTTP.decoder.decode(PasskeysResponse.self, from: list.body).credentials.isEmpty)
        }
    }

    /// `clientDataJSON` naming a member twice is refused, even when both copies agree: a reader
    /// that keeps the first and one that keeps the last must never see different ceremonies.
    /// The same registration without the copy succeeds.
    @Test func clientDataNamingAMemberTwiceIsRefused() async throws {
        try await AttackEndToEndTests.withTarget { target in
            guard let python = TestPython.find() else { return }
            let root = try BuildProducts.temporaryDirectory("twofold-e2e-clientdata")
            defer { try? FileManager.default.removeItem(at: root) }
            let authenticator = PasskeyEndToEndTests.Authenticator(
                python: python, directory: root, origin: "http://localhost:\(target.server.port)")
            let token = try await target.register("dana")

            func create() async throws -> [String: Any] {
                let options = try await Self.send(target, API.Passkeys.registerOptions.path(), json: nil, bearer: token)
                let created = try authenticator.run("create", options: options.body, ["--library", "fido2"])
                return try #require(try JSONSerialization.jsonObject(with: created) as? [String: Any])
            }
            var credential = try await create()
            var response = try #require(credential["response"] as? [String: Any])
            let clientData = String(
                decoding: try Self.unbase64URL(try #require(response["clientDataJSON"] as? String)), as: UTF8.self)
            let challenge = try #require(
                (try JSONSerialization.jsonObject(with: Data(clientData.utf8)) as? [String: Any])?["challenge"]
                    as? String)
            let doubled = String(clientData.dropLast()) + #","challenge":"\#(challenge)"}"#
            response["clientDataJSON"] = Base64URL.encode(Array(doubled.utf8))
            credential["response"] = response
            let refused = try await Self.send(
                target, API.Passkeys.registerVerify.path(), json: ["credential": credential, "name": "Key"],
                bearer: token)
            #expect(refused.status == 422, "\(refused.text)")

            let accepted = try await Self.send(
                target, API.Passkeys.registerVerify.path(), json: ["credential": try await create(), "name": "Key"],
                bearer: token)
            #expect(accepted.status == 200, "\(accepted.text)")
        }
    }

    /// A stranger's flood of passwordless assertions from one address is refused before any
    /// signature is checked; another address is not held back.
    @Test func passwordlessVerificationIsThrottledPerAddress() async throws {
        try await AttackEndToEndTests.withTarget(environment: ["TWOFOLD_TRUST_PROXY": "true"]) { target in
            let assertion: [String: Any] = [
                "credential": [
                    "id": "AAAAAAAAAAAAAAAA", "rawId": "AAAAAAAAAAAAAAAA", "type": "public-key",
                    "response": [
                        "clientDataJSON": Base64URL.encode(Array(#"{"type":"webauthn.get"}"#.utf8)),
                        "authenticatorData": Base64URL.encode([UInt8](repeating: 0, count: 37)),
                        "signature": "AAAA",
                    ],
                ]
            ]
            var statuses: [Int] = []
            for _ in 0..<40 {
                statuses.append(
                    try await Self.send(target, API.Passkeys.signInVerify.path(), json: assertion, from: "10.4.4.4")
                        .status)
            }
            #expect(statuses.contains(429), "\(statuses)")
            #expect(!statuses.prefix(20).contains(429), "\(statuses)")
            let other = try await Self.send(
                target, API.Passkeys.signInVerify.path(), json: assertion, from: "10.4.4.5")
            #expect(other.status != 429, "\(other.text)")
        }
    }

    // MARK: Anonymous sign-in: strangers with a username

    /// A stranger who knows the username asks for SMS sign-in codes from one address and
    /// guesses codes from many addresses of one IPv6 /64: they spend only their own budget, lock
    /// only their own tries (a locked try is answered exactly like a wrong code), and the
    /// owner, from their own address, still gets a code and signs in with it.
    @Test func strangersCannotLockTheOwnersSignInOrSpendItsCodes() async throws {
        let environment = [
            "TWOFOLD_TRUST_PROXY": "true", "TWOFOLD_CODE_RESEND_SECONDS": "10", "TWOFOLD_CODE_SENDS_PER_HOUR": "2",
        ]
        try await AttackEndToEndTests.withTarget(environment: environment) { target in
            let phone = "+14155550177"
            let password = try await target.register("olga")
            try await target.enableSMS(password, phone: phone)
            let recent = try await target.signInWithSMS("olga")
            let enrolled = try await Self.send(
                target, API.DeviceKeys.enroll.path(),
                json: ["username": "olga", "method": "smsOTP", "deviceId": "old-phone"], bearer: recent)
            #expect(enrolled.status == 200, "\(enrolled.text)")
            var delivered = try await Self.settled(target.gateway)

            func request(from address: String) async throws {
                let sent = try await Self.send(
                    target, API.DeviceKeys.requestOTP.path(), json: ["username": "olga"], from: address)
                #expect(sent.status == 200, "\(sent.text)")
            }
            func verify(_ code: String, from address: String) async throws -> HTTP.Response {
                try await Self.send(
                    target, API.DeviceKeys.verifyOTP.path(), json: ["username": "olga", "otp": code], from: address)
            }
            // The stranger asks three times (waiting out the resend wait): their budget is two.
            let stranger = (1...9).map { "2001:db8:7:1::\($0)" }
            for attempt in 0..<3 {
                if attempt > 0 { try await Task.sleep(for: .seconds(11)) }
                try await request(from: stranger[0])
            }
            _ = try await Self.settled(target.gateway)
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
        try await AttackEndToEndTests.withTarget(environment: ["TWOFOLD_TRUST_PROXY": "true"]) { target in
            let dora = try await target.register("dora")
            let key = SoftwareDeviceKey()
            let deviceEnrolled = try await Self.send(
                target, API.DeviceKeys.enroll.path(),
                json: [
                    "username": "dora", "method": "secureEnclave", "deviceId": "iphone-1",
                    "publicKey": key.publicKey,
                ], bearer: dora)
            #expect(deviceEnrolled.status == 200, "\(deviceEnrolled.text)")
            /// A challenge for dora's device asked from `address`, signed with `signer`, sent back.
            func signIn(signedBy signer: SoftwareDeviceKey, from address: String) async throws
                -> HTTP.Response
            {
                let issued = try await Self.send(
                    target, API.DeviceKeys.initiate.path(), json: ["username": "dora", "deviceId": "iphone-1"],
                    from: address)
                let challenge = try HTTP.decoder.decode(DeviceChallengeResponse.self, from: issued.body)
                return try await Self.send(
                    target, API.DeviceKeys.verifySignature.path(),
                    json: [
                        "username": "dora", "deviceId": "iphone-1", "challengeId": challenge.challengeId,
                        "signature": try signer.sign(challenge: challenge.challenge),
                    ], from: address)
            }
            let forger = SoftwareDeviceKey()
            for index in 0..<8 {
                #expect(try await signIn(signedBy: forger, from: "198.51.100.\(index + 1)").status == 401)
            }
            let owner = try await signIn(signedBy: key, from: "192.0.2.10")
            #expect(owner.status == 200, "the owner's device still signs in: \(owner.text)")
        }
    }

    // MARK: Access tokens

    /// Whoever holds the signing key cannot be stopped, but the token reader must read one
    /// header: a header or claims naming a member twice are refused, as is a token issued in
    /// the future. The same claims signed again as they were still work (the forging is real).
    @Test func tokensWithDuplicateMembersOrAFutureIssueTimeAreRefused() async throws {
        try await AttackEndToEndTests.withTarget { target in
            let token = try await target.register("tess")
            let key = try P256.Signing.PrivateKey(
                pemRepresentation: String(
                    decoding: try Data(
                        contentsOf: target.server.dataDirectory.appendingPathComponent("signing-key.pem")),
                    as: UTF8.self))
            let parts = token.split(separator: ".").map(String.init)
            let header = String(decoding: try Self.unbase64URL(parts[0]), as: UTF8.self)
            let claims = String(decoding: try Self.unbase64URL(parts[1]), as: UTF8.self)
            func sign(header: String, claims: String) throws -> String {
                let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
                return input + "." + Base64URL.encode(try key.signature(for: Data(input.utf8)).rawRepresentation)
            }
            func account(_ bearer: String) async throws -> Int {
                try await Self.send(target, API.Account.show.path(), method: "GET", json: nil, bearer: bearer).status
            }
            #expect(try await account(try sign(header: header, claims: claims)) == 200, "the same, signed again")

            let kid = try #require(
                (try JSONSerialization.jsonObject(with: Data(header.utf8)) as? [String: Any])?["kid"] as? String)
            let twoKids = String(header.dropLast()) + #","kid":"\#(kid)"}"#
            #expect(try await account(try sign(header: twoKids, claims: claims)) == 401, "a header naming kid twice")
            let twoAlgs = String(header.dropLast()) + #","alg":"ES256"}"#
            #expect(try await account(try sign(header: twoAlgs, claims: claims)) == 401, "a header naming alg twice")
            let sub = try #require(
                (try JSONSerialization.jsonObject(with: Data(claims.utf8)) as? [String: Any])?["sub"] as? String)
            let twoSubs = String(claims.dropLast()) + #","sub":"\#(sub)"}"#
            #expect(try await account(try sign(header: header, claims: twoSubs)) == 401, "claims naming sub twice")

            var future = try #require(try JSONSerialization.jsonObject(with: Data(claims.utf8)) as? [String: Any])
            let now = Int(Date().timeIntervalSince1970)
            future["iat"] = now + 600
            future["exp"] = now + 600 + 900
            let ahead = String(decoding: try JSONSerialization.data(withJSONObject: future), as: UTF8.self)
            #expect(try await account(try sign(header: header, claims: ahead)) == 401, "issued ten minutes from now")
        }
    }

    // MARK: Password sign-in

    /// Strangers guessing from many addresses fill the account's bucket, and then the owner's
    /// right password is refused too, but not from the owner's remembered device. The bucket
    /// counts failures only: many right passwords in a row never fill it.
    @Test func strangersCannotHoldARememberedDeviceOutAndRightPasswordsSpendNothing() async throws {
        let environment = ["TWOFOLD_TRUST_PROXY": "true", "TWOFOLD_THROTTLE_LOGIN_PER_ACCOUNT": "15/60"]
        try await AttackEndToEndTests.withTarget(environment: environment) { target in
            let token = try await target.register("rhea")
            let (secret, _) = try await target.enableTOTP(token)
            let flow = try HTTP.decoder.decode(
                LoginChallengeResponse.self,
                from: try await target.call(
                    API.Auth.login.path(), ["username": "rhea", "password": AuthEndToEndTests.password]
                ).body)
            let trusted = try await Self.send(
                target, API.SecondStep.validateTOTP.path(),
                json: ["tempToken": flow.otpFlowId, "code": try Target.code(secret, offset: 30), "trustDevice": true])
            #expect(trusted.status == 200, "\(trusted.text)")
            let device = try #require(
                try HTTP.decoder.decode(SecondStepResponse.self, from: trusted.body).trustedDeviceToken)

            func login(_ password: String, from address: String, device: String? = nil, name: String = "rhea")
                async throws -> Int
            {
                try await Self.send(
                    target, API.Auth.login.path(), json: ["username": name, "password": password], from: address,
                    headers: device.map { ["X-Trusted-Device": $0] } ?? [:]
                ).status
            }
            var statuses: [Int] = []
            for index in 0..<25 { statuses.append(try await login("guess \(index)", from: "198.51.100.\(index + 1)")) }
            #expect(statuses.filter { $0 == 429 }.count >= 5, "\(statuses)")
            #expect(try await login(AuthEndToEndTests.password, from: "192.0.2.200") == 429, "the bucket is shut")
            #expect(
                try await login(AuthEndToEndTests.password, from: "192.0.2.201", device: device) == 200,
                "the remembered device is exempt")

            _ = try await target.register("sam")
            for index in 0..<30 {
                let status = try await login(AuthEndToEndTests.password, from: "203.0.113.\(index + 1)", name: "sam")
                #expect(status == 200, "sign-in \(index)")
                if status != 200 { break }
            }
        }
    }

    // MARK: Account changes

    /// An address another account uses is answered exactly like a free one: no one learns
    /// whose it is. Its owner is told and sent no code; the free address gets its code.
    @Test func aTakenEmailAddressIsAnsweredLikeAFreeOne() async throws {
        try await Self.withMailTarget(environment: ["TWOFOLD_CODE_RESEND_SECONDS": "10"]) { target, sink in
            let alice = try await target.register("alice")
            _ = try await target.register("bob")
            let taken = try await target.call(
                API.Account.changeEmail.path(), ["email": "bob@example.com"], bearer: alice, method: "PUT")
            let toBob = try await poll({ try sink.messages() }) { $0.contains { $0.recipients == ["bob@example.com"] } }
            try await Task.sleep(for: .seconds(11))  // the resend wait, as after a free address
            let free = try await target.call(
                API.Account.changeEmail.path(), ["email": "alice@new.example"], bearer: alice, method: "PUT")
            #expect(taken.status == 202 && free.status == 202, "\(taken.text) \(free.text)")
            func members(_ response: HTTP.Response) throws -> [String] {
                try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any]).keys.sorted()
            }
            #expect(try members(taken) == members(free))
            let told = try #require(toBob.first { $0.recipients == ["bob@example.com"] })
            #expect(Self.text(of: told).contains("Nothing changed") && oneTimeCode(in: Self.text(of: told)) == nil)
            #expect(toBob.filter { $0.recipients == ["bob@example.com"] }.count == 1)
            let sent = try await poll({ try sink.messages() }) {
                $0.contains { $0.recipients == ["alice@new.example"] }
            }
            #expect(
                sent.contains { $0.recipients == ["alice@new.example"] && oneTimeCode(in: Self.text(of: $0)) != nil })
        }
    }

    /// A backup code used for a step-up and sent again moments later (a double tap, a retried
    /// request) is `409 already_used`, not a wrong code counted towards a lock.
    @Test func aBackupCodeSentTwiceOnStepUpIsAlreadyUsed() async throws {
        try await AttackEndToEndTests.withTarget { target in
            let token = try await target.register("uma")
            let (secret, codes) = try await target.enableTOTP(token)
            let code = try #require(codes?.first)
            // A new session (a factor never confirms the session that added it).
            let login = try await target.call(
                API.Auth.login.path(), ["username": "uma", "password": AuthEndToEndTests.password])
            let flow = try HTTP.decoder.decode(LoginChallengeResponse.self, from: login.body)
            let signedIn = try await target.call(
                API.SecondStep.validateTOTP.path(),
                ["tempToken": flow.otpFlowId, "code": try Target.code(secret, offset: 30)])
            let session = try HTTP.decoder.decode(SecondStepResponse.self, from: signedIn.body).accessToken.token
            let first = try await target.call(
                API.Auth.stepUp.path(), ["method": "backup", "code": code], bearer: session)
            #expect(first.status == 200, "\(first.text)")
            let again = try await target.call(
                API.Auth.stepUp.path(), ["method": "backup", "code": code], bearer: session)
            #expect(again.status == 409 && again.text.contains("already_used"), "\(again.text)")
        }
    }

    /// One live step-up challenge per session purpose: asking again retires the last one, so a
    /// stolen session cannot pile up challenges; and one user asks for only so many at once,
    /// from however many addresses.
    @Test func aNewChallengeRetiresTheLastAndEachUserAsksForFew() async throws {
        let environment = ["TWOFOLD_TRUST_PROXY": "true", "TWOFOLD_THROTTLE_CHALLENGES_PER_USER": "10/60"]
        try await AttackEndToEndTests.withTarget(environment: environment) { target in
            let token = try await target.register("vera")
            let key = SoftwareDeviceKey()
            let enrolled = try await target.call(
                API.DeviceKeys.enroll.path(),
                ["username": "vera", "method": "secureEnclave", "deviceId": "iphone-1", "publicKey": key.publicKey],
                bearer: token)
            #expect(enrolled.status == 200, "\(enrolled.text)")
            let scenarios = DeviceKeyScenarios(server: target.server, gateway: target.gateway)
            let session = try await scenarios.signIn("vera", device: "iphone-1", key: key)
            func challenge(from address: String = "192.0.2.1") async throws -> HTTP.Response {
                try await Self.send(
                    target, API.Auth.stepUpDeviceKeyChallenge.path(), json: ["deviceId": "iphone-1"],
                    bearer: session, from: address)
            }
            let first = try HTTP.decoder.decode(DeviceChallengeResponse.self, from: try await challenge().body)
            let second = try HTTP.decoder.decode(DeviceChallengeResponse.self, from: try await challenge().body)
            for (issued, expected) in [(first, 409), (second, 200)] {
                let stepped = try await target.call(
                    API.Auth.stepUp.path(),
                    [
                        "method": "deviceKey", "deviceId": "iphone-1", "challengeId": issued.challengeId,
                        "signature": try key.sign(challenge: issued.challenge),
                    ], bearer: session)
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
        try await Self.withMailTarget { target, sink in
            guard let python = TestPython.find() else { return }
            let root = try BuildProducts.temporaryDirectory("twofold-e2e-notice")
            defer { try? FileManager.default.removeItem(at: root) }
            let authenticator = PasskeyEndToEndTests.Authenticator(
                python: python, directory: root, origin: "http://localhost:\(target.server.port)")
            let token = try await target.register("nina")
            let options = try await Self.send(target, API.Passkeys.registerOptions.path(), json: nil, bearer: token)
            let created = try authenticator.run("create", options: options.body, ["--library", "fido2"])
            let name = "Reset your password at evil.example"
            let registered = try await Self.send(
                target, API.Passkeys.registerVerify.path(),
                json: ["credential": try JSONSerialization.jsonObject(with: created), "name": name], bearer: token)
            #expect(registered.status == 200, "\(registered.text)")
            let passkey = try HTTP.decoder.decode(PasskeyRegisteredResponse.self, from: registered.body).credential

            let notices = try await poll({ try sink.messages() }) {
                $0.contains { Self.text(of: $0).contains("passkey") }
            }
            let notice = try #require(notices.first { Self.text(of: $0).contains("passkey") })
            let text = Self.text(of: notice)
            #expect(notice.recipients == ["nina@example.com"])
            #expect(!text.contains("evil.example"), "\(text)")
            #expect(text.contains("from 127.0.0.1"), "\(text)")

            for bad in ["evil\u{202E}txt.exe", "line\u{2028}break", "para\u{2029}", "iso\u{2066}late", "mark\u{200F}"] {
                let refused = try await Self.send(
                    target, API.Passkeys.rename.path(passkey.id), method: "PATCH", json: ["name": bad], bearer: token)
                #expect(refused.status == 422, "\(bad.unicodeScalars.map { String($0.value, radix: 16) })")
            }
            let model = try await Self.send(
                target, API.DeviceKeys.enroll.path(),
                json: [
                    "username": "nina", "method": "secureEnclave", "deviceId": "p", "deviceModel": "iPhone\u{202E}",
                    "publicKey": SoftwareDeviceKey().publicKey,
                ], bearer: token)
            #expect(model.status == 422 && model.text.contains("deviceModel"), "\(model.text)")
        }
    }
}

import Crypto
import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldDevice
import TwofoldTestSupport
import VaporTesting

@testable import TwofoldServer

/// Issue T: `docs/security.md`'s sign-in policy tables, walked over HTTP. Every endpoint a
/// signed-in user calls to change something must have a row; each row's change is tried from
/// every account and session state of the second table, on a fresh account each time, and the
/// server's answer (`403 step_up_required` or not) must be the table's.
@Suite(.tags(.database)) struct SignInPolicyMatrixTests {
    /// The two tables of `docs/security.md`, read from the repository.
    struct Tables {
        /// `METHOD /path` → change.
        var endpoints: [String: String] = [:]
        /// Column names, in order (`P·stale`, …).
        var columns: [String] = []
        /// change → column → `allowed` or `step-up`.
        var outcomes: [String: [String: String]] = [:]

        static func read() throws -> Tables {
            let root = BuildProducts.repositoryRoot
            let text = try String(contentsOf: root.appendingPathComponent("docs/security.md"), encoding: .utf8)
            var tables = Tables()
            var section = ""
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("### ") { section = String(line.dropFirst(4)) }
                guard line.hasPrefix("|"), !line.hasPrefix("| ---") else { continue }
                let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
                switch section {
                case "Which endpoint makes which change" where cells.count == 2 && cells[0] != "endpoint":
                    tables.endpoints[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = cells[1]
                case "What each change needs" where cells.first == "change":
                    tables.columns = Array(cells.dropFirst())
                case "What each change needs":
                    tables.outcomes[cells[0]] = Dictionary(uniqueKeysWithValues: zip(tables.columns, cells.dropFirst()))
                default: break
                }
            }
            return tables
        }
    }

    /// The endpoints the first table must name: every one a signed-in user calls to change
    /// something (taken from `API`, not from the table).
    static var changing: [AnyEndpoint] {
        API.all.filter { $0.access == .signedIn && $0.method != .get }
    }

    @Test func everyEndpointThatChangesSomethingHasARow() throws {
        let tables = try Tables.read()
        let missing = Self.changing.map(\.route).filter { tables.endpoints[$0] == nil }
        #expect(missing.isEmpty, "endpoints without a row in docs/security.md: \(missing)")
        let unknown = Set(tables.endpoints.keys).subtracting(Self.changing.map(\.route))
        #expect(unknown.isEmpty, "rows for endpoints that are not signed-in changes: \(unknown)")
        for change in Set(tables.endpoints.values) {
            #expect(tables.outcomes[change]?.count == tables.columns.count, "no full row for the change \(change)")
        }
        #expect(tables.columns.count == 13)
    }

    static let columns: [String] = (try? Tables.read().columns) ?? []

    @Test(arguments: columns) func everyChangeFromOneAccountAndSessionState(column: String) async throws {
        let tables = try Tables.read()
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let world = World(app: app, clock: clock, column: column)
            for (index, endpoint) in Self.changing.enumerated() {
                let change = try #require(tables.endpoints[endpoint.route])
                let expected = try #require(tables.outcomes[change]?[column])
                let account = try await world.account(index)
                let (status, problem) = try await world.call(endpoint, as: account)
                #expect(
                    problem != "unauthorized" && status < 500,
                    "\(endpoint.route) [\(column)]: \(status) \(problem ?? "")")
                let outcome = status == 403 && problem == "step_up_required" ? "step-up" : "allowed"
                #expect(
                    outcome == expected,
                    "\(endpoint.route) (\(change)) from \(column): \(outcome) (\(status) \(problem ?? "")), the table says \(expected)"
                )
            }
        }
    }

    /// One signed-in account in a column's state.
    struct Account {
        let name: String
        var token: String
        let address: String
    }

    /// Makes accounts in the state a column names, over HTTP.
    struct World {
        let app: Application
        let clock: TestClock
        let column: String

        var kind: Character { column.first ?? "P" }
        var session: String { String(column.split(separator: "·").last ?? "") }

        func account(_ index: Int) async throws -> Account {
            let name = "u\(index)\(kind.lowercased())"
            let address = "10.\(index % 250).\(Int(kind.asciiValue ?? 0)).\(Int.random(in: 1...250))"
            var account = Account(
                name: name,
                token: try await Accounts.signUp(app, name, address: address).accessToken.token,
                address: address)
            let phone = "+1415555\(String(format: "%04d", index))"
            switch kind {
            case "T":
                let secret = try await TOTPSteps.enable(
                    app, tokens: try await tokens(account.token, name: name), clock: clock)
                let flow = try await TOTPSteps.startLogin(app, name, from: address)
                account.token = try await secondStep(
                    ["otpFlowId": flow, "method": "totp", "code": try TOTPSteps.code(secret.secret, clock)])
            case "S":
                try await verifyPhone(phone, account)
                try await expectOK(
                    post(
                        API.DeviceKeys.enroll.path(), ["username": name, "method": "smsOTP", "deviceId": "old-phone"],
                        account))
                clock.advance(by: 61)
                try await expectOK(post(API.DeviceKeys.requestOTP.path(), ["username": name], nil, from: address))
                let code = try await code(to: phone)
                let (status, body) = try await post(
                    API.DeviceKeys.verifyOTP.path(), ["username": name, "otp": code], nil, from: address)
                #expect(status == 200, "\(body)")
                account.token = try DeviceKeySteps.decode(DeviceTokenResponse.self, body).token
            case "D":
                try await verifyPhone(phone, account)
                let key = SoftwareDeviceKey()
                try await expectOK(
                    post(
                        API.DeviceKeys.enroll.path(),
                        [
                            "username": name, "method": "secureEnclave", "deviceId": "iphone-1",
                            "publicKey": key.publicKey,
                        ],
                        account))
                let flow = try await TOTPSteps.startLogin(app, name, from: address)
                let (status, body) = try await post(
                    API.SecondStep.deviceKeyChallenge.path(), ["otpFlowId": flow, "deviceId": "iphone-1"], nil,
                    from: address)
                #expect(status == 200, "\(body)")
                let challenge = try DeviceKeySteps.decode(DeviceChallengeResponse.self, body)
                account.token = try await secondStep([
                    "otpFlowId": flow, "method": "deviceKey", "deviceId": "iphone-1",
                    "challengeId": challenge.challengeId, "signature": try key.sign(challenge: challenge.challenge),
                ])
            default: break
            }
            // An SMS sign-in's session proves more with the password (S·stale and S·2fa).
            if kind == "S", session != "sms" {
                account.token = try await stepUp(["method": "password", "password": Accounts.password], account)
            }
            switch session {
            case "stale":
                clock.advance(by: 6 * 60)
            case "pwd", "pwd+email", "pwd+sms":
                if kind != "P" {
                    clock.advance(by: 6 * 60)
                    account.token = try await stepUp(
                        ["method": "password", "password": Accounts.password], account)
                }
                if session != "pwd" {
                    let method = session == "pwd+email" ? "email" : "sms"
                    try await expectOK(post(API.Auth.stepUpSend.path(), ["method": method], account))
                    let code = try await code(to: method == "email" ? "\(name)@example.com" : phone)
                    account.token = try await stepUp(["method": method, "code": code], account)
                }
            default: break
            }
            return account
        }

        /// The endpoint called as `account` with a body its decoder and input checks accept.
        func call(_ endpoint: AnyEndpoint, as account: Account) async throws -> (UInt, String?) {
            let key = P256.Signing.PrivateKey().publicKey.x963Representation.base64EncodedString()
            var path = endpoint.template
            for (parameter, value) in [
                "{sessionID}": UUID().uuidString, "{credentialID}": "AAAAAAAAAAAAAAAAAAAAAA",
                "{deviceID}": endpoint.template.contains("trusted-devices") ? UUID().uuidString : "iphone-1",
            ] {
                path = path.replacingOccurrences(of: parameter, with: value)
            }
            let body: [String: Any]?
            switch endpoint.route {
            case API.Auth.stepUp.erased.route: body = ["method": "totp", "code": "000000"]
            case API.Auth.stepUpSend.erased.route: body = ["method": "email"]
            case API.Auth.stepUpDeviceKeyChallenge.erased.route: body = ["deviceId": "iphone-1"]
            case API.Push.setPushToken.erased.route: body = ["pushToken": String(repeating: "ab", count: 32)]
            case API.Push.stepUpStatus.erased.route: body = ["requestId": UUID().uuidString, "wait": 0]
            case API.Passkeys.registerVerify.erased.route:
                body = [
                    "credential": [
                        "id": "AAAAAAAAAAAAAAAAAAAAAA", "rawId": "AAAAAAAAAAAAAAAAAAAAAA", "type": "public-key",
                        "response": ["clientDataJSON": "e30", "attestationObject": "oA"],
                    ]
                ]
            case API.Passkeys.rename.erased.route: body = ["name": "Work laptop"]
            case API.TwoFactor.totpVerify.erased.route, API.TwoFactor.smsVerify.erased.route,
                API.TwoFactor.emailVerify.erased.route:
                body = ["code": "000000"]
            case API.TwoFactor.smsSetup.erased.route: body = ["phoneNumber": "+442071838750"]
            case API.TwoFactor.primaryMethod.erased.route: body = ["method": "totp"]
            case API.Account.changePassword.erased.route:
                body = ["currentPassword": "not the password", "newPassword": "a brand new passphrase"]
            case API.Account.changePhone.erased.route: body = ["phoneNumber": "+442071838750"]
            case API.Account.changeEmail.erased.route: body = ["email": "\(account.name)-new@example.com"]
            case API.DeviceKeys.enroll.erased.route:
                body = ["username": account.name, "method": "secureEnclave", "deviceId": "new-phone", "publicKey": key]
            case API.DeviceKeys.unenroll.erased.route, API.DeviceKeys.downgrade.erased.route:
                body = ["username": account.name, "deviceId": "iphone-1"]
            case API.DeviceKeys.upgrade.erased.route:
                body = ["username": account.name, "deviceId": "iphone-1", "publicKey": key]
            case API.DeviceFactors.setPIN.erased.route: body = ["newPin": "4829"]
            case API.DeviceFactors.verifyPIN.erased.route: body = ["pin": "4829"]
            case API.DeviceFactors.addBiometrics.erased.route: body = ["pin": "4829", "publicKey": key]
            case API.DeviceFactors.verifyBiometrics.erased.route:
                body = ["challengeId": UUID().uuidString, "signature": "AAAA"]
            case API.DeviceFactors.removeBiometrics.erased.route: body = ["pin": "4829"]
            default: body = nil
            }
            var headers = HTTPHeaders.bearer(account.token, from: account.address)
            if body == nil { headers.remove(name: .contentType) }
            var result: (UInt, String?) = (0, nil)
            try await app.raw(
                HTTPMethod(rawValue: endpoint.method.rawValue), path, headers: headers,
                body: try body.map { ByteBuffer(data: try JSONSerialization.data(withJSONObject: $0)) }
            ) { response in
                result = (response.status.code, response.status.code >= 400 ? try? response.problem().code : nil)
            }
            return result
        }

        // MARK: Steps

        func tokens(_ token: String, name: String) async throws -> AuthTokensResponse {
            let user = try await app.client().send(API.Account.show, bearer: token)
            return AuthTokensResponse(
                accessToken: TokenDTO(token: token, expiresAt: clock.now),
                refreshToken: TokenDTO(token: "", expiresAt: clock.now), user: user)
        }

        func post(_ path: String, _ body: [String: String], _ account: Account?, from address: String? = nil)
            async throws -> (UInt, String)
        {
            try await DeviceKeySteps.post(
                app, path, body, token: account?.token, from: address ?? account?.address ?? "10.0.0.1")
        }

        func expectOK(_ answer: (UInt, String)) throws {
            #expect((200..<300).contains(answer.0), "\(answer.1)")
        }

        func verifyPhone(_ phone: String, _ account: Account) async throws {
            var (status, body) = try await put(API.Account.changePhone.path(), ["phoneNumber": phone], account)
            #expect(status == 202, "\(body)")
            (status, body) = try await put(
                API.Account.changePhone.path(), ["phoneNumber": phone, "code": try await code(to: phone)], account)
            #expect(status == 200, "\(body)")
        }

        func put(_ path: String, _ body: [String: String], _ account: Account) async throws -> (UInt, String) {
            var result: (UInt, String) = (0, "")
            try await app.raw(
                .PUT, path, headers: .bearer(account.token, from: account.address), body: json(body)
            ) { response in result = (response.status.code, response.body.string) }
            return result
        }

        /// The last code delivered to `destination`.
        func code(to destination: String) async throws -> String {
            let codes = try await Codes.deliverMessages(app, clock: clock).filter {
                $0.destination == destination
            }
            return try #require(codes.last).code
        }

        func secondStep(_ body: [String: String]) async throws -> String {
            let (status, answer) = try await DeviceKeySteps.post(app, API.SecondStep.verifyLogin.path(), body)
            #expect(status == 200, "\(answer)")
            return try DeviceKeySteps.decode(SecondStepResponse.self, answer).accessToken.token
        }

        func stepUp(_ body: [String: String], _ account: Account) async throws -> String {
            let (status, answer) = try await post(API.Auth.stepUp.path(), body, account)
            #expect(status == 200, "\(answer)")
            return try DeviceKeySteps.decode(StepUpResponse.self, answer).accessToken.token
        }
    }
}

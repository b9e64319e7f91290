import Foundation
import Testing
import TwofoldAPI
import TwofoldDevice
import VaporTesting

@testable import TwofoldServer

/// Every anonymous endpoint that takes an account's name answers a known account and an unknown
/// one alike (issue V item 6): the same status, the same bytes, the same headers but the date and
/// the request's own ID. Where the answer carries something fresh by design (a challenge, a
/// request's ID), the same fields, each of the same length.
@Suite struct AnonymousAnswersTests {
    struct Answer: Equatable {
        var status: UInt
        var body: String
        var headers: [String: String]
    }

    static func send(_ app: Application, _ path: String, _ body: [String: String], from address: String)
        async throws -> Answer
    {
        var answer: Answer?
        try await app.raw(.POST, path, headers: .client(address), body: json(body)) { response in
            var headers: [String: String] = [:]
            for (name, value) in response.headers
            where !["date", "x-request-id"].contains(name.lowercased()) {
                headers[name.lowercased()] = value
            }
            answer = Answer(status: response.status.code, body: String(buffer: response.body), headers: headers)
        }
        return try #require(answer)
    }

    /// A known account with everything an anonymous endpoint can find: a verified phone, an SMS
    /// sign-in device and a key device.
    static func knownAccount(_ app: Application, clock: TestClock) async throws {
        let tokens = try await Accounts.signUp(app)
        try await Accounts.verifyPhone(app, token: tokens.accessToken.token, clock: clock)
        let key = SoftwareDeviceKey()
        #expect(try await DeviceKeySteps.enroll(app, token: tokens.accessToken.token, phone: key).0 == 200)
        // The key is a second factor now: the SMS sign-in device is added by a session it signed in.
        let signedIn = try await DeviceKeySteps.stepUp(app, token: tokens.accessToken.token, phone: key)
        #expect(try await DeviceKeySteps.enrollSMSDevice(app, token: signedIn, device: "phone").0 == 200)
        _ = try await Codes.deliverAll(app, clock: clock)
    }

    /// The same request for `alice` and for `nobody`, each from an address of its own.
    static func pair(_ app: Application, _ path: String, _ body: (String) -> [String: String], index: Int)
        async throws -> (known: Answer, unknown: Answer)
    {
        (
            try await send(app, path, body("alice"), from: "10.20.\(index).1"),
            try await send(app, path, body("nobody"), from: "10.21.\(index).1")
        )
    }

    @Test func knownAndUnknownAccountsGetTheSameBytes() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            try await Self.knownAccount(app, clock: clock)
            let requests: [(String, (String) -> [String: String])] = [
                (API.Auth.login.path(), { ["username": $0, "password": "not the password"] }),
                (API.DeviceKeys.requestOTP.path(), { ["username": $0] }),
                (API.DeviceKeys.verifyOTP.path(), { ["username": $0, "otp": "123456"] }),
                (
                    API.DeviceKeys.verifySignature.path(),
                    {
                        [
                            "username": $0, "deviceId": "iphone-1", "challengeId": UUID().uuidString.lowercased(),
                            "signature": Data(repeating: 7, count: 64).base64EncodedString(),
                        ]
                    }
                ),
            ]
            for (index, (path, body)) in requests.enumerated() {
                clock.advance(by: 61)
                let (known, unknown) = try await Self.pair(app, path, body, index: index)
                #expect(known == unknown, "\(path)")
            }
        }
    }

    /// Answers with a fresh value by design: the same fields, each of the same length, and the
    /// same status and headers.
    @Test func freshValuesHaveTheSameShapeForKnownAndUnknownAccounts() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            try await Self.knownAccount(app, clock: clock)
            let requests: [(String, (String) -> [String: String])] = [
                (API.DeviceKeys.initiate.path(), { ["username": $0, "deviceId": "phone"] }),
                (API.Recovery.start.path(), { ["email": "\($0)@example.com", "message": "I lost my phone."] }),
            ]
            for (index, (path, body)) in requests.enumerated() {
                let (known, unknown) = try await Self.pair(app, path, body, index: index)
                #expect(known.status == unknown.status, "\(path)")
                #expect(known.headers.keys.sorted() == unknown.headers.keys.sorted(), "\(path)")
                #expect(Self.shape(known.body) == Self.shape(unknown.body), "\(path): \(known.body) / \(unknown.body)")
            }
        }
    }

    /// Each field of a JSON object with its value's length (its value, for a short word).
    static func shape(_ body: String) -> [String: String] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else {
            return ["": body]
        }
        return object.mapValues { value in
            let text = "\(value)"
            return text.count <= 16 ? text : "\(text.count) characters"
        }
    }
}

import Crypto
import Fluent
import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldDevice
import VaporTesting

@testable import TwofoldServer

/// Device keys: enrolled, challenged, signed and sent, as a phone does.
enum DeviceKeySteps {
    static func post(
        _ app: Application, _ path: String, _ body: [String: String], token: String? = nil,
        from address: String = "10.0.0.1"
    ) async throws -> (UInt, String) {
        var result: (UInt, String) = (0, "")
        let headers: HTTPHeaders = token.map { .bearer($0, from: address) } ?? .client(address)
        try await app.raw(.POST, path, headers: headers, body: json(body)) { response in
            result = (response.status.code, response.body.string)
        }
        return result
    }

    /// Sends any encodable body (for nested JSON the `[String: String]` form cannot hold).
    static func send(
        _ app: Application, _ method: HTTPMethod, _ path: String, _ body: some Encodable, token: String? = nil,
        from address: String = "10.0.0.1"
    ) async throws -> (UInt, String) {
        var result: (UInt, String) = (0, "")
        var headers: HTTPHeaders = token.map { .bearer($0, from: address) } ?? .client(address)
        headers.contentType = .json
        try await app.raw(
            method, path, headers: headers, body: ByteBuffer(data: try Wire.encoder().encode(body))
        ) { response in
            result = (response.status.code, response.body.string)
        }
        return result
    }

    /// Steps up with the device key (`POST /auth/step-up` with `method: deviceKey`) in a session
    /// signed in with that key (a key never steps up the session that added it); the new access
    /// token.
    static func stepUp(
        _ app: Application, token _: String, phone: SoftwareDeviceKey, device: String = "iphone-1",
        user: String = "alice"
    ) async throws -> String {
        let client = app.client()
        let signIn = try await challenge(app, device: device, user: user)
        let token = try await client.send(
            API.DeviceKeys.verifySignature,
            VerifySignatureRequest(
                username: user, deviceId: device, challengeId: signIn.challengeId,
                signature: try phone.sign(challenge: signIn.challenge))
        ).token
        let challenge = try await client.send(
            API.Auth.stepUpDeviceKeyChallenge, StepUpDeviceKeyChallengeRequest(deviceId: device), bearer: token)
        return try await client.send(
            API.Auth.stepUp,
            StepUpRequest(
                method: .deviceKey, deviceId: device, challengeId: challenge.challengeId,
                signature: try phone.sign(challenge: challenge.challenge)), bearer: token
        ).accessToken.token
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try Wire.decoder().decode(T.self, from: Data(text.utf8))
    }

    static func enroll(_ app: Application, token: String, phone: SoftwareDeviceKey, device: String = "iphone-1")
        async throws
        -> (UInt, String)
    {
        try await post(
            app, API.DeviceKeys.enroll.path(),
            [
                "username": "alice", "publicKey": phone.publicKey, "method": "secureEnclave", "deviceId": device,
                "deviceModel": "iPhone 15 Pro",
            ], token: token)
    }

    /// Enrols `phone`'s key as `username`'s device `device` with `token`, through the typed
    /// client; the server's answer.
    @discardableResult
    static func enrollKey(
        _ app: Application, _ username: String, token: String, phone: SoftwareDeviceKey, device: String
    ) async throws -> DeviceEnrollResponse {
        try await app.client().send(
            API.DeviceKeys.enroll,
            DeviceEnrollRequest(
                username: username, publicKey: phone.publicKey, method: "secureEnclave", deviceId: device),
            bearer: token)
    }

    /// Enrols `device` of alice's for seed 004's SMS sign-in (her verified phone) with `token`.
    static func enrollSMSDevice(_ app: Application, token: String, device: String = "old-phone") async throws
        -> (UInt, String)
    {
        try await post(
            app, API.DeviceKeys.enroll.path(), ["username": "alice", "method": "smsOTP", "deviceId": device],
            token: token)
    }

    static func challenge(_ app: Application, device: String = "iphone-1", user: String = "alice") async throws
        -> DeviceChallengeResponse
    {
        try await app.client().send(API.DeviceKeys.initiate, DeviceRequest(username: user, deviceId: device))
    }

    static func verify(
        _ app: Application, _ challenge: DeviceChallengeResponse, signature: String, device: String = "iphone-1",
        user: String = "alice", from address: String = "10.0.0.1"
    ) async throws -> (UInt, String) {
        try await post(
            app, API.DeviceKeys.verifySignature.path(),
            ["username": user, "deviceId": device, "challengeId": challenge.challengeId, "signature": signature],
            from: address)
    }

    /// Alice with two key devices ("iphone-1" with `phone`, "ipad-2" with another key) and Bob with
    /// "iphone-1" of his own; a challenge for Alice's iPhone and her phone's signature over it.
    static func twoUsersAndAPendingChallenge(_ app: Application) async throws -> (
        challenge: DeviceChallengeResponse, signature: String, phone: SoftwareDeviceKey
    ) {
        let alice = try await Accounts.signUp(app)
        let bob = try await Accounts.signUp(app, "bob", address: "10.0.0.2")
        let phone = SoftwareDeviceKey()
        _ = try await enroll(app, token: alice.accessToken.token, phone: phone)
        let stepped = try await stepUp(app, token: alice.accessToken.token, phone: phone)
        #expect(try await enroll(app, token: stepped, phone: SoftwareDeviceKey(), device: "ipad-2").0 == 200)
        let bobEnrolled = try await post(
            app, API.DeviceKeys.enroll.path(),
            [
                "username": "bob", "publicKey": SoftwareDeviceKey().publicKey, "method": "secureEnclave",
                "deviceId": "iphone-1",
            ],
            token: bob.accessToken.token, from: "10.0.0.2")
        #expect(bobEnrolled.0 == 200)
        let challenge = try await self.challenge(app)
        return (challenge, try phone.sign(challenge: challenge.challenge), phone)
    }
}

import Crypto
import Foundation
import SQLKit
import Testing
import TwofoldAPI
import TwofoldDevice
import VaporTesting

@testable import TwofoldServer

/// A device's own second factor: its PIN set, changed and verified, biometrics added and blocked.
enum DeviceSecondFactorSteps {
    typealias Phone = SoftwareDeviceKey

    /// A user with one enrolled key device ("iphone-1"), and the user's access token.
    static func enrolled(_ app: Application) async throws -> String {
        let tokens = try await Accounts.signUp(app)
        let (status, _) = try await DeviceKeySteps.enroll(
            app, token: tokens.accessToken.token, phone: SoftwareDeviceKey())
        #expect(status == 200)
        return tokens.accessToken.token
    }

    /// Calls `endpoint`, one of a device's (`/device/{deviceID}/…`), for `device`.
    static func call<Body, Answer>(
        _ app: Application, _ method: HTTPMethod, _ endpoint: ResourceEndpoint<Body, Answer>, _ body: some Encodable,
        token: String, device: String = "iphone-1"
    ) async throws -> (UInt, String) {
        precondition(method.rawValue == endpoint.method.rawValue, "\(endpoint) is not \(method)")
        return try await DeviceKeySteps.send(app, method, endpoint.path(device), body, token: token)
    }

    static func setPIN(_ app: Application, _ request: DevicePINChangeRequest, token: String) async throws -> (
        UInt, String
    ) {
        try await call(app, .PUT, API.DeviceFactors.setPIN, request, token: token)
    }

    static func verifyPIN(_ app: Application, _ pin: String, token: String) async throws -> (UInt, String) {
        try await call(app, .POST, API.DeviceFactors.verifyPIN, DevicePINRequest(pin: pin), token: token)
    }

    static func state(_ app: Application, token: String) async throws -> DeviceSecondFactorResponse {
        var state: DeviceSecondFactorResponse?
        try await app.testing().test(.GET, API.DeviceFactors.status.path("iphone-1"), headers: .bearer(token)) {
            response in
            #expect(response.status == .ok)
            state = try response.decode(DeviceSecondFactorResponse.self)
        }
        return try #require(state)
    }

    /// Adds `biometricKey` after verifying `pin`.
    static func addBiometrics(_ app: Application, _ biometricKey: SoftwareDeviceKey, pin: String, token: String)
        async throws
        -> (UInt, String)
    {
        try await call(
            app, .PUT, API.DeviceFactors.addBiometrics,
            DeviceBiometricsAddRequest(publicKey: biometricKey.publicKey, pin: pin),
            token: token)
    }

    /// A fresh biometric challenge signed with `biometricKey`.
    static func biometricSignature(_ app: Application, _ biometricKey: SoftwareDeviceKey, token: String) async throws
        -> BiometricSignature
    {
        let (status, body) = try await call(
            app, .POST, API.DeviceFactors.biometricChallenge, [String: String](), token: token)
        #expect(status == 200, "\(body)")
        let challenge = try DeviceKeySteps.decode(BiometricChallengeResponse.self, body)
        return BiometricSignature(
            challengeId: challenge.challengeId, signature: try biometricKey.sign(challenge: challenge.challenge))
    }

    static func blockPIN(_ app: Application, token: String) async throws {
        for remaining in [2, 1] {
            let (status, body) = try await verifyPIN(app, "9999", token: token)
            #expect(status == 401 && body.contains(#""attemptsRemaining":\#(remaining)"#), "\(body)")
        }
        let (status, body) = try await verifyPIN(app, "9999", token: token)
        #expect(status == 403 && body.contains(#""code":"pin_blocked""#), "\(body)")
    }
}

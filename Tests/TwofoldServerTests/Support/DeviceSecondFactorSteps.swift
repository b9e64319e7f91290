import Crypto
import Foundation
import SQLKit
import Testing
import TwofoldAPI
import TwofoldClient
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
        try await app.client().send(API.DeviceFactors.status, "iphone-1", bearer: token)
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
        let challenge = try await app.client().send(API.DeviceFactors.biometricChallenge, "iphone-1", bearer: token)
        return BiometricSignature(
            challengeId: challenge.challengeId, signature: try biometricKey.sign(challenge: challenge.challenge))
    }

    static func blockPIN(_ app: Application, token: String) async throws {
        let client = app.client()
        for remaining in [2, 1] {
            let refused = try await refusal {
                try await client.send(
                    API.DeviceFactors.verifyPIN, "iphone-1", DevicePINRequest(pin: "9999"), bearer: token)
            }
            #expect(refused.status == 401 && refused.attemptsRemaining == remaining, "\(refused)")
        }
        let refused = try await refusal {
            try await client.send(API.DeviceFactors.verifyPIN, "iphone-1", DevicePINRequest(pin: "9999"), bearer: token)
        }
        #expect(refused.status == 403 && refused.code == .pinBlocked, "\(refused)")
    }
}

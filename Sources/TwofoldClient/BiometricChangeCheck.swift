import Foundation
import TwofoldAPI

/// Seed 001's "biometrics changed": the device's biometric key is bound to the faces or fingers
/// enrolled when it was made, so a face added or removed in Settings leaves it unusable. An app
/// runs `check()` at launch and whenever it returns to the foreground; when the key was
/// invalidated, the check deletes it and tells the server, which turns the device's biometric
/// factor off (`POST /device/{id}/biometrics/invalidated`). The person adds biometrics again
/// with the PIN (`DeviceSecondFactorFlow(.addBiometrics)`).
public struct BiometricChangeCheck: Sendable {
    /// What the check found.
    public enum Outcome: Sendable, Equatable {
        /// The biometric key works as enrolled (or there is none).
        case unchanged
        /// The key was invalidated: it is deleted, and the server turned biometrics off; its
        /// answer, the device's second factors now.
        case reported(hasPin: Bool, hasBiometrics: Bool)
    }

    private let session: SessionManager
    private let device: any DeviceSecurity
    private let deviceID: String
    private let biometricKeyTag: String

    /// A check of the biometric key under `biometricKeyTag` of the enrolled device `deviceID`,
    /// reported with `session`'s tokens.
    public init(session: SessionManager, device: any DeviceSecurity, deviceID: String, biometricKeyTag: String) {
        (self.session, self.device, self.deviceID, self.biometricKeyTag) =
            (session, device, deviceID, biometricKeyTag)
    }

    /// Compares the biometrics now with those the key was made with; reports a change once.
    /// Throws what the server or the network said, and keeps the key then: the next check
    /// reports again. Once the server has the report, the key is deleted.
    public func check() async throws -> Outcome {
        guard await device.biometricKeyInvalidated(tag: biometricKeyTag) else { return .unchanged }
        let (client, deviceID) = (session.client, deviceID)
        let status = try await session.authorized(stepUp: nil) { token in
            try await client.send(API.DeviceFactors.biometricsInvalidated, deviceID, bearer: token)
        }
        await device.deleteKey(tag: biometricKeyTag)
        return .reported(hasPin: status.hasPin, hasBiometrics: status.hasBiometrics)
    }
}

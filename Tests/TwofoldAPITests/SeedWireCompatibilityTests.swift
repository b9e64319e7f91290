import Foundation
import Testing
import TwofoldAPI

/// Every request and response example of seed 004's API, verbatim (the seed's
/// `"secureEnclave" | "smsOTP"` written as one of them), decodes into Twofold's types and encodes
/// back to the same JSON: the same fields with the same values, nothing added or lost.
@Suite struct SeedWireCompatibilityTests {
    static func roundTrip<T: Codable>(_ type: T.Type, _ example: String) throws -> (Any, Any) {
        let decoder = Wire.decoder()
        let encoder = Wire.encoder()
        let value = try decoder.decode(T.self, from: Data(example.utf8))
        let original = try JSONSerialization.jsonObject(with: Data(example.utf8))
        let encoded = try JSONSerialization.jsonObject(with: encoder.encode(value))
        return (original, encoded)
    }

    static func check<T: Codable>(_ type: T.Type, _ example: String, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let (original, encoded) = try roundTrip(type, example)
        #expect(
            (original as? NSDictionary) == (encoded as? NSDictionary), "\(T.self): \(encoded)",
            sourceLocation: sourceLocation)
    }

    @Test func enrolment() throws {
        try Self.check(
            DeviceEnrollRequest.self,
            #"""
            {
              "username": "testuser",
              "phoneNumber": "+1234567890",
              "publicKey": "base64EncodedPublicKey",
              "method": "secureEnclave",
              "deviceId": "unique-device-id",
              "deviceModel": "iPhone 15 Pro"
            }
            """#)
        try Self.check(
            DeviceEnrollResponse.self,
            #"""
            {
              "success": true,
              "deviceId": "unique-device-id",
              "method": "secureEnclave",
              "message": "Device enrolled successfully"
            }
            """#)
        try Self.check(DeviceRequest.self, #"{ "username": "testuser", "deviceId": "unique-device-id" }"#)
        try Self.check(DeviceMessageResponse.self, #"{ "success": true, "message": "Device unenrolled" }"#)
        try Self.check(
            DeviceUpgradeRequest.self,
            #"{ "username": "testuser", "deviceId": "unique-device-id", "publicKey": "base64EncodedPublicKey" }"#)
        try Self.check(
            DeviceMethodResponse.self,
            #"{ "success": true, "method": "secureEnclave", "message": "Upgraded to Secure Enclave MFA" }"#)
        try Self.check(
            DeviceMethodResponse.self, #"{ "success": true, "method": "smsOTP", "message": "Downgraded to SMS OTP" }"#)
    }

    @Test func authentication() throws {
        try Self.check(
            DeviceChallengeResponse.self,
            #"""
            {
              "method": "secureEnclave",
              "challenge": "base64EncodedRandomNonce",
              "challengeId": "uuid",
              "expiresIn": 300
            }
            """#)
        try Self.check(
            VerifySignatureRequest.self,
            #"""
            {
              "username": "testuser",
              "deviceId": "unique-device-id",
              "challengeId": "uuid",
              "signature": "base64EncodedSignature"
            }
            """#)
        try Self.check(
            DeviceTokenResponse.self,
            #"{ "success": true, "token": "jwt-token", "message": "Authentication successful" }"#)
        try Self.check(RequestOTPRequest.self, #"{ "username": "testuser", "phoneNumber": "+1234567890" }"#)
        try Self.check(
            RequestOTPResponse.self, #"{ "success": true, "message": "OTP sent to +1234567890", "expiresIn": 300 }"#)
        try Self.check(DeviceVerifyOTPRequest.self, #"{ "username": "testuser", "otp": "123456" }"#)
    }

    @Test func deviceManagement() throws {
        try Self.check(
            DeviceListResponse.self,
            #"""
            {
              "devices": [
                {
                  "deviceId": "unique-device-id",
                  "deviceModel": "iPhone 15 Pro",
                  "method": "secureEnclave",
                  "enrolledAt": "2025-11-01T10:00:00Z",
                  "lastUsed": "2025-11-05T08:30:00Z"
                }
              ]
            }
            """#)
        try Self.check(
            DeviceStatusResponse.self,
            #"""
            {
              "deviceId": "unique-device-id",
              "enrolled": true,
              "method": "secureEnclave",
              "hasPublicKey": true,
              "phoneNumber": "+1234567890"
            }
            """#)
    }
}

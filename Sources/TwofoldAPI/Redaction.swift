import Foundation

/// A value that carries a secret (a password, a token, a code, a key): `print`, string
/// interpolation, `debugPrint`, `String(reflecting:)` and `dump` show it with every secret
/// replaced by `‹redacted›`, at any depth. What counts as a secret is one list,
/// `Redaction.secretNames`; every type in `TwofoldAPI` and `TwofoldClient` with a member of such
/// a name conforms (a test in TwofoldClientTests reads the sources and says so).
public protocol RedactedDescription: Encodable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{}

/// The one rule for what a description may show.
public enum Redaction {
    /// The names of the members that hold a secret, wherever they are in a value.
    public static let secretNames: Set<String> = [
        "password", "currentPassword", "newPassword", "pin", "pass",
        "token", "tempToken", "refreshToken", "deviceToken", "pushToken", "trustedDeviceToken", "flow",
        "otpFlowId", "code", "backupCode", "backupCodes", "secret", "otpauthURI", "otpauthUri", "qrCodeSVG",
        "qrCodeSvg",
        "signature", "clientDataJSON", "authenticatorData", "attestationObject",
    ]

    /// What a secret is shown as.
    public static let mark = "‹redacted›"

    /// `value`'s members as `Encodable` writes them, in name order, each secret replaced.
    public static func members(of value: some Encodable) -> [(name: String, shown: String)] {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(value),
            let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        else { return [] }
        guard let members = object as? [String: Any] else { return [("value", shown(object))] }
        return members.keys.sorted().map { name in
            (name, secretNames.contains(name) ? mark : shown(members[name] as Any))
        }
    }

    /// A JSON value as text, secrets in nested objects replaced.
    private static func shown(_ value: Any) -> String {
        switch value {
        case let object as [String: Any]:
            let inside = object.keys.sorted().map { name in
                "\(name): \(secretNames.contains(name) ? mark : shown(object[name] as Any))"
            }
            return "(" + inside.joined(separator: ", ") + ")"
        case let array as [Any]:
            return "[" + array.map(shown).joined(separator: ", ") + "]"
        case let text as String:
            return "\"\(text)\""
        case is NSNull:
            return "nil"
        default:
            return "\(value)"
        }
    }
}

extension RedactedDescription {
    /// `Type(member: value, …)` with every secret replaced.
    public var description: String {
        "\(Self.self)(" + Redaction.members(of: self).map { "\($0.name): \($0.shown)" }.joined(separator: ", ") + ")"
    }

    /// The same as `description`: a debugger or a log shows no more.
    public var debugDescription: String { description }

    /// What `dump` and a debugger's variables view walk: the members as text, secrets replaced.
    public var customMirror: Mirror {
        Mirror(
            self, children: Redaction.members(of: self).map { (label: $0.name, value: $0.shown as Any) },
            displayStyle: .struct)
    }
}

// Every type of the wire protocol with a member named in `Redaction.secretNames`.
extension PasswordChangeRequest: RedactedDescription {}
extension PasswordResetOptionsRequest: RedactedDescription {}
extension PasswordResetSendRequest: RedactedDescription {}
extension PasswordResetChallengeRequest: RedactedDescription {}
extension PasswordResetRequest: RedactedDescription {}
extension EmailVerifyRequest: RedactedDescription {}
extension PhoneChangeRequest: RedactedDescription {}
extension EmailChangeRequest: RedactedDescription {}
extension RegisterRequest: RedactedDescription {}
extension LoginRequest: RedactedDescription {}
extension PushTokenRequest: RedactedDescription {}
extension TokenDTO: RedactedDescription {}
extension AuthTokensResponse: RedactedDescription {}
extension LoginChallengeResponse: RedactedDescription {}
extension RefreshRequest: RedactedDescription {}
extension RefreshResponse: RedactedDescription {}
extension StepUpRequest: RedactedDescription {}
extension DeviceEnrollRequest: RedactedDescription {}
extension DeviceKeyChallengeRequest: RedactedDescription {}
extension VerifySignatureRequest: RedactedDescription {}
extension DeviceTokenResponse: RedactedDescription {}
extension BiometricSignature: RedactedDescription {}
extension DevicePINRequest: RedactedDescription {}
extension DeviceFactorProof: RedactedDescription {}
extension DevicePINChangeRequest: RedactedDescription {}
extension DeviceBiometricsAddRequest: RedactedDescription {}
extension RegistrationResponse: RedactedDescription {}
extension PasskeyRegisteredResponse: RedactedDescription {}
extension PasskeyFlowOptionsRequest: RedactedDescription {}
extension AssertionResponse: RedactedDescription {}
extension PasskeyFlowVerifyRequest: RedactedDescription {}
extension RecoveryCancelRequest: RedactedDescription {}
extension TOTPSetupResponse: RedactedDescription {}
extension CodeRequest: RedactedDescription {}
extension PushStartRequest: RedactedDescription {}
extension PushStatusRequest: RedactedDescription {}
extension PushCompleteRequest: RedactedDescription {}
extension PushDecisionRequest: RedactedDescription {}
extension FactorEnabledResponse: RedactedDescription {}
extension TOTPValidateRequest: RedactedDescription {}
extension BackupCodeVerifyRequest: RedactedDescription {}
extension MFAVerifyLoginRequest: RedactedDescription {}
extension SecondStepResponse: RedactedDescription {}
extension BackupCodesResponse: RedactedDescription {}
extension OTPVerifyRequest: RedactedDescription {}
extension OTPResendRequest: RedactedDescription {}
extension RecoveryRedeemRequest: RedactedDescription {}

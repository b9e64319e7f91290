/// Why an `otpauth://` URI was refused; each malformed case has its own reason.
public struct OTPAuthURIError: Error, Equatable, CustomStringConvertible, Sendable {
    enum Reason: Equatable, Sendable {
        case notOTPAuthScheme
        case unknownType(String)
        case missingLabel
        case emptyAccount
        case invalidPercentEncoding(String)
        case duplicateParameter(String)
        case missingSecret
        case invalidSecret(Base32.DecodingError)
        case unsupportedAlgorithm(String)
        case invalidDigits(String)
        case invalidPeriod(String)
        case missingCounter
        case invalidCounter(String)
        case issuerMismatch(label: String, parameter: String)
        case invalidIssuer
    }
    let reason: Reason

    public var description: String {
        switch reason {
        case .notOTPAuthScheme: return "otpauth URI: must start with otpauth://"
        case .unknownType(let type): return "otpauth URI: type \(type.debugDescription) is neither totp nor hotp"
        case .missingLabel: return "otpauth URI: the label (issuer:account) is missing"
        case .emptyAccount: return "otpauth URI: the account name in the label is empty"
        case .invalidPercentEncoding(let text):
            return "otpauth URI: \(text.debugDescription) is not valid percent-encoded UTF-8"
        case .duplicateParameter(let name): return "otpauth URI: parameter \(name) appears more than once"
        case .missingSecret: return "otpauth URI: the secret parameter is missing"
        case .invalidSecret(let error): return "otpauth URI: the secret is not valid Base32 (\(error))"
        case .unsupportedAlgorithm(let value):
            return "otpauth URI: algorithm \(value.debugDescription) is not SHA1, SHA256 or SHA512"
        case .invalidDigits(let value): return "otpauth URI: digits \(value.debugDescription) is not 6, 7 or 8"
        case .invalidPeriod(let value):
            return "otpauth URI: period \(value.debugDescription) is not a positive number of seconds"
        case .missingCounter: return "otpauth URI: an hotp URI needs a counter parameter"
        case .invalidCounter(let value): return "otpauth URI: counter \(value.debugDescription) is not a whole number"
        case .issuerMismatch(let label, let parameter):
            return
                "otpauth URI: the label's issuer \(label.debugDescription) differs from the issuer parameter \(parameter.debugDescription)"
        case .invalidIssuer: return "otpauth URI: an issuer must not be empty or contain ':'"
        }
    }
}

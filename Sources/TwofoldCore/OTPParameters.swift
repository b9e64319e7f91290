/// Why a one-time-password parameter was refused.
public struct OTPParameterError: Error, Equatable, CustomStringConvertible, Sendable {
    enum Reason: Equatable, Sendable {
        case digits(Int)
        case period(Int)
        case negativeTime(Int64)
        case emptySecret
    }
    let reason: Reason

    public var description: String {
        switch reason {
        case .digits(let value): return "OTP digits must be 6, 7 or 8, not \(value)"
        case .period(let value): return "TOTP period must be a positive number of seconds, not \(value)"
        case .negativeTime(let value): return "TOTP time must not be before 1970-01-01, not \(value)"
        case .emptySecret: return "OTP secret must not be empty"
        }
    }
}

/// The number of digits of a code: 6, 7 or 8 (RFC 4226 §5.3 requires at least 6; more than 8
/// is not supported by authenticator apps).
public struct OTPDigits: Hashable, Sendable, CustomStringConvertible {
    public let value: Int

    public init(_ value: Int) throws(OTPParameterError) {
        guard (6...8).contains(value) else { throw OTPParameterError(reason: .digits(value)) }
        self.value = value
    }

    public static let six = try! OTPDigits(6)
    public static let eight = try! OTPDigits(8)

    public var description: String { String(value) }

    var modulus: UInt32 {
        var result: UInt32 = 1
        for _ in 0..<value { result *= 10 }
        return result
    }
}

/// The time step of a TOTP generator in seconds (RFC 6238 `X`), always positive.
public struct TOTPPeriod: Hashable, Sendable, CustomStringConvertible {
    public let seconds: Int

    public init(_ seconds: Int) throws(OTPParameterError) {
        guard seconds > 0 else { throw OTPParameterError(reason: .period(seconds)) }
        self.seconds = seconds
    }

    public static let thirtySeconds = try! TOTPPeriod(30)

    public var description: String { String(seconds) }
}

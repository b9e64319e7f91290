// A one-time-password generator holds the shared secret: `print`, `debugPrint` and `dump` show
// its settings and `‹redacted›` for the secret, never the bytes (which are the whole factor).

extension HOTP: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "HOTP(secret: ‹redacted›, algorithm: \(algorithm), digits: \(digits))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(
            self, children: ["secret": "‹redacted›", "algorithm": algorithm, "digits": digits], displayStyle: .struct)
    }
}

extension TOTP: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "TOTP(secret: ‹redacted›, algorithm: \(algorithm), digits: \(digits), period: \(period))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(
            self, children: ["secret": "‹redacted›", "algorithm": algorithm, "digits": digits, "period": period],
            displayStyle: .struct)
    }
}

extension OTPAuthURI: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "OTPAuthURI(kind: \(kind), issuer: \(issuer.map { "\"\($0)\"" } ?? "nil"), account: \"\(account)\", "
            + "secret: ‹redacted›, algorithm: \(algorithm), digits: \(digits))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "kind": kind, "issuer": issuer as Any, "account": account, "secret": "‹redacted›",
                "algorithm": algorithm, "digits": digits,
            ], displayStyle: .struct)
    }
}

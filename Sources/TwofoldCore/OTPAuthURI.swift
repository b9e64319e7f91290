/// An `otpauth://` URI in the Key Uri Format that authenticator apps scan from QR codes, e.g.
/// `otpauth://totp/eToro:user@email.com?secret=JBSWY3DPEHPK3PXP&issuer=eToro&algorithm=SHA1&digits=6&period=30`
/// (seed 000).
public struct OTPAuthURI: Equatable, Sendable {
    /// Time-based with a period, or counter-based with the next counter.
    public enum Kind: Equatable, Sendable {
        case totp(period: TOTPPeriod)
        case hotp(counter: UInt64)
    }

    public var kind: Kind
    /// Who issued the secret; written both as the label prefix and the `issuer` parameter.
    public var issuer: String?
    public var account: String
    public var secret: [UInt8]
    public var algorithm: OTPAlgorithm
    public var digits: OTPDigits

    public init(
        kind: Kind = .totp(period: .thirtySeconds),
        issuer: String?,
        account: String,
        secret: [UInt8],
        algorithm: OTPAlgorithm = .sha1,
        digits: OTPDigits = .six
    ) throws(OTPAuthURIError) {
        if let issuer, issuer.isEmpty || issuer.contains(":") {
            throw OTPAuthURIError(reason: .invalidIssuer)
        }
        guard !account.isEmpty else { throw OTPAuthURIError(reason: .emptyAccount) }
        guard !secret.isEmpty else { throw OTPAuthURIError(reason: .missingSecret) }
        self.kind = kind
        self.issuer = issuer
        self.account = account
        self.secret = secret
        self.algorithm = algorithm
        self.digits = digits
    }

    /// The URI text. Parameters come in the order of seed 000's example.
    public var string: String {
        var label = PercentEncoding.encode(account, allowing: PercentEncoding.labelSafe)
        if let issuer {
            label = PercentEncoding.encode(issuer, allowing: PercentEncoding.labelSafe) + ":" + label
        }
        var query: [(String, String)] = [("secret", Base32.encode(secret))]
        if let issuer { query.append(("issuer", issuer)) }
        query.append(("algorithm", algorithm.rawValue))
        query.append(("digits", String(digits.value)))
        let type: String
        switch kind {
        case .totp(let period):
            type = "totp"
            query.append(("period", String(period.seconds)))
        case .hotp(let counter):
            type = "hotp"
            query.append(("counter", String(counter)))
        }
        let encodedQuery = query.map {
            "\($0.0)=\(PercentEncoding.encode($0.1, allowing: PercentEncoding.queryValueSafe))"
        }
        return "otpauth://\(type)/\(label)?\(encodedQuery.joined(separator: "&"))"
    }

    /// A TOTP generator for this URI, or `nil` for an HOTP URI.
    public var totp: TOTP? {
        guard case .totp(let period) = kind else { return nil }
        return try? TOTP(secret: secret, algorithm: algorithm, digits: digits, period: period)
    }

    /// Parses a URI, refusing every malformed part with a precise reason.
    public init(parsing text: String) throws(OTPAuthURIError) {
        let prefix = "otpauth://"
        guard text.count > prefix.count, text.prefix(prefix.count).lowercased() == prefix else {
            throw OTPAuthURIError(reason: .notOTPAuthScheme)
        }
        let rest = text.dropFirst(prefix.count)
        let pathAndQuery = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = pathAndQuery[0]
        let queryText = pathAndQuery.count > 1 ? pathAndQuery[1] : ""

        let pathParts = path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let type = pathParts[0].lowercased()
        guard type == "totp" || type == "hotp" else {
            throw OTPAuthURIError(reason: .unknownType(String(pathParts[0])))
        }
        guard pathParts.count == 2, !pathParts[1].isEmpty else {
            throw OTPAuthURIError(reason: .missingLabel)
        }
        let label = try Self.decode(pathParts[1], plusIsSpace: false)
        var labelIssuer: String?
        var account = label
        if let colon = label.firstIndex(of: ":") {
            labelIssuer = String(label[..<colon])
            // Key Uri Format: optional spaces may follow the colon.
            account = String(label[label.index(after: colon)...].drop(while: { $0 == " " }))
        }
        guard !account.isEmpty else { throw OTPAuthURIError(reason: .emptyAccount) }

        var parameters: [String: String] = [:]
        for pair in queryText.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try Self.decode(parts[0], plusIsSpace: true).lowercased()
            let value = parts.count > 1 ? try Self.decode(parts[1], plusIsSpace: true) : ""
            guard parameters[name] == nil else {
                throw OTPAuthURIError(reason: .duplicateParameter(name))
            }
            parameters[name] = value
        }

        guard let secretText = parameters["secret"], !secretText.isEmpty else {
            throw OTPAuthURIError(reason: .missingSecret)
        }
        let secret: [UInt8]
        do { secret = try Base32.decode(secretText) } catch {
            throw OTPAuthURIError(reason: .invalidSecret(error))
        }

        var issuer = labelIssuer
        if let parameterIssuer = parameters["issuer"] {
            if let labelIssuer, labelIssuer != parameterIssuer {
                throw OTPAuthURIError(
                    reason: .issuerMismatch(label: labelIssuer, parameter: parameterIssuer))
            }
            issuer = parameterIssuer
        }

        var algorithm = OTPAlgorithm.sha1
        if let value = parameters["algorithm"] {
            guard let parsed = OTPAlgorithm(name: value) else {
                throw OTPAuthURIError(reason: .unsupportedAlgorithm(value))
            }
            algorithm = parsed
        }

        var digits = OTPDigits.six
        if let value = parameters["digits"] {
            guard let number = Self.wholeNumber(value), let parsed = try? OTPDigits(number) else {
                throw OTPAuthURIError(reason: .invalidDigits(value))
            }
            digits = parsed
        }

        let kind: Kind
        if type == "totp" {
            var period = TOTPPeriod.thirtySeconds
            if let value = parameters["period"] {
                guard let number = Self.wholeNumber(value), let parsed = try? TOTPPeriod(number) else {
                    throw OTPAuthURIError(reason: .invalidPeriod(value))
                }
                period = parsed
            }
            kind = .totp(period: period)
        } else {
            guard let value = parameters["counter"] else {
                throw OTPAuthURIError(reason: .missingCounter)
            }
            guard value.allSatisfy(\.isASCIIDigit), let counter = UInt64(value) else {
                throw OTPAuthURIError(reason: .invalidCounter(value))
            }
            kind = .hotp(counter: counter)
        }

        try self.init(
            kind: kind, issuer: issuer, account: account, secret: secret, algorithm: algorithm,
            digits: digits)
    }

    private static func decode(_ text: Substring, plusIsSpace: Bool) throws(OTPAuthURIError) -> String {
        guard let decoded = PercentEncoding.decode(text, plusIsSpace: plusIsSpace) else {
            throw OTPAuthURIError(reason: .invalidPercentEncoding(String(text)))
        }
        return decoded
    }

    private static func wholeNumber(_ text: String) -> Int? {
        guard !text.isEmpty, text.count <= 9, text.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int(text)
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

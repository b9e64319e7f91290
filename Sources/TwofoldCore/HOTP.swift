/// An HMAC-based one-time password generator (RFC 4226).
public struct HOTP: Sendable {
    public let secret: [UInt8]
    public let algorithm: OTPAlgorithm
    public let digits: OTPDigits

    public init(secret: [UInt8], algorithm: OTPAlgorithm = .sha1, digits: OTPDigits = .six)
        throws(OTPParameterError)
    {
        guard !secret.isEmpty else { throw OTPParameterError(reason: .emptySecret) }
        self.secret = secret
        self.algorithm = algorithm
        self.digits = digits
    }

    /// The code for `counter`, zero-padded to `digits` characters.
    public func code(counter: UInt64) -> String {
        codes(counters: CollectionOfOne(counter))[0]
    }

    /// The codes for `counters`, with the key prepared once (a TOTP check computes three).
    public func codes(counters: some Sequence<UInt64>) -> [String] {
        algorithm.macs(key: secret, messages: counters.map(Self.message)).map(code(mac:))
    }

    /// The counter as 8 big-endian bytes, the HMAC message (RFC 4226 §5.2).
    private static func message(_ counter: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: counter >> UInt64(56 - 8 * $0)) }
    }

    private func code(mac: [UInt8]) -> String {
        // Dynamic truncation, RFC 4226 §5.3: the low nibble of the last byte picks 4 bytes.
        let offset = Int(mac[mac.count - 1] & 0x0F)
        let binary =
            (UInt32(mac[offset] & 0x7F) << 24)
            | (UInt32(mac[offset + 1]) << 16)
            | (UInt32(mac[offset + 2]) << 8)
            | UInt32(mac[offset + 3])
        let value = binary % digits.modulus
        let text = String(value)
        return String(repeating: "0", count: digits.value - text.count) + text
    }

    /// `true` when `candidate` is the code for `counter`, compared in constant time.
    public func matches(_ candidate: String, counter: UInt64) -> Bool {
        ConstantTime.equals(code(counter: counter), candidate)
    }
}

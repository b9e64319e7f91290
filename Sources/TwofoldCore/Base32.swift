/// Base32 as defined by RFC 4648 §6, the encoding authenticator apps use for TOTP secrets.
public enum Base32 {
    /// Why a Base32 string could not be decoded.
    public struct DecodingError: Error, Equatable, CustomStringConvertible, Sendable {
        enum Reason: Equatable, Sendable {
            case invalidCharacter(Character, offset: Int)
            case misplacedPadding(offset: Int)
            case invalidLength(Int)
            case empty
        }
        let reason: Reason

        public var description: String {
            switch reason {
            case .invalidCharacter(let character, let offset):
                return
                    "Base32: character \(character.debugDescription) at offset \(offset) is not in the alphabet A–Z, 2–7"
            case .misplacedPadding(let offset):
                return "Base32: padding '=' at offset \(offset) is followed by data"
            case .invalidLength(let count):
                return
                    "Base32: \(count) symbols cannot encode whole bytes (a group of 8 ends after 2, 4, 5, 7 or 8 symbols)"
            case .empty:
                return "Base32: the input holds no data"
            }
        }
    }

    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// Encodes bytes as upper-case Base32. Padding (`=`) is optional; authenticator apps expect none.
    public static func encode<Bytes: Collection>(_ bytes: Bytes, padding: Bool = false) -> String
    where Bytes.Element == UInt8 {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 4) / 5 * 8)
        var buffer: UInt64 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt64(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output.append(alphabet[Int((buffer >> UInt64(bits)) & 0x1F)])
            }
        }
        if bits > 0 {
            output.append(alphabet[Int((buffer << UInt64(5 - bits)) & 0x1F)])
        }
        if padding {
            while output.count % 8 != 0 { output.append(UInt8(ascii: "=")) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes Base32, tolerating lower case, spaces (and other whitespace) and missing padding,
    /// as users type or paste secrets. Anything else is an error, never a trap.
    public static func decode(_ text: String) throws(DecodingError) -> [UInt8] {
        var symbols: [UInt8] = []
        var sawPadding = false
        for (offset, character) in text.enumerated() {
            if character.isWhitespace { continue }
            if character == "=" {
                sawPadding = true
                continue
            }
            if sawPadding { throw DecodingError(reason: .misplacedPadding(offset: offset)) }
            guard let value = symbolValue(character) else {
                throw DecodingError(reason: .invalidCharacter(character, offset: offset))
            }
            symbols.append(value)
        }
        guard !symbols.isEmpty else { throw DecodingError(reason: .empty) }
        // A final group of 8 symbols may stop after 2, 4, 5 or 7 symbols; 1, 3 or 6 are impossible.
        guard ![1, 3, 6].contains(symbols.count % 8) else {
            throw DecodingError(reason: .invalidLength(symbols.count))
        }
        var output: [UInt8] = []
        output.reserveCapacity(symbols.count * 5 / 8)
        var buffer: UInt64 = 0
        var bits = 0
        for value in symbols {
            buffer = (buffer << 5) | UInt64(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8((buffer >> UInt64(bits)) & 0xFF))
            }
        }
        // Leftover bits (fewer than 8) are dropped, as RFC 4648 decoders and authenticator apps
        // do: secrets generated as random symbol strings often carry some.
        return output
    }

    private static func symbolValue(_ character: Character) -> UInt8? {
        guard let ascii = character.asciiValue else { return nil }
        switch ascii {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return ascii - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return ascii - UInt8(ascii: "a")
        case UInt8(ascii: "2")...UInt8(ascii: "7"): return ascii - UInt8(ascii: "2") + 26
        default: return nil
        }
    }
}

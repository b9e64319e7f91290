/// Checks that no JSON object in a document names a member twice.
///
/// RFC 8259 §4 leaves duplicate names to the parser ("the behavior of software that receives
/// such an object is unpredictable"): one reader takes the first, another the last. A signed
/// document that two readers would read differently — a JWT header, WebAuthn's
/// `clientDataJSON` — is refused instead (RFC 7515 §5.2 asks exactly this of JOSE headers).
/// Names are compared after their escapes are decoded, so `"a"` and `"\u0061"` are the same
/// name. One pass over the bytes, each object's names kept in a set; nesting deeper than
/// `maximumDepth` is refused.
public enum JSONUniqueMembers {
    /// How deep objects and arrays may nest.
    public static let maximumDepth = 32

    /// Why a document was refused.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// An object names this member twice.
        case duplicate(String)
        /// The bytes are not one JSON value (or nest too deep).
        case malformed

        public var description: String {
            switch self {
            case .duplicate(let name): "the member \(name.debugDescription) appears twice"
            case .malformed: "it is not a JSON value"
            }
        }
    }

    /// Throws when an object of `json` names a member twice, or `json` is not one JSON value.
    public static func check(_ json: some Collection<UInt8>) throws(Failure) {
        var scanner = Scanner(bytes: Array(json))
        try scanner.value(depth: 0)
        scanner.skipSpace()
        guard scanner.index == scanner.bytes.count else { throw .malformed }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func expect(_ byte: UInt8) throws(Failure) {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { throw .malformed }
            index += 1
        }

        mutating func value(depth: Int) throws(Failure) {
            skipSpace()
            guard index < bytes.count, depth < JSONUniqueMembers.maximumDepth else { throw .malformed }
            switch bytes[index] {
            case UInt8(ascii: "{"): try object(depth: depth)
            case UInt8(ascii: "["): try array(depth: depth)
            case UInt8(ascii: "\""): _ = try string()
            default: try scalar()
            }
        }

        mutating func object(depth: Int) throws(Failure) {
            index += 1
            var names: Set<[UInt8]> = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return
            }
            while true {
                skipSpace()
                let name = try string()
                guard names.insert(name).inserted else {
                    throw .duplicate(String(decoding: name, as: UTF8.self))
                }
                try expect(UInt8(ascii: ":"))
                try value(depth: depth + 1)
                skipSpace()
                guard index < bytes.count else { throw .malformed }
                let next = bytes[index]
                index += 1
                if next == UInt8(ascii: "}") { return }
                guard next == UInt8(ascii: ",") else { throw .malformed }
            }
        }

        mutating func array(depth: Int) throws(Failure) {
            index += 1
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return
            }
            while true {
                try value(depth: depth + 1)
                skipSpace()
                guard index < bytes.count else { throw .malformed }
                let next = bytes[index]
                index += 1
                if next == UInt8(ascii: "]") { return }
                guard next == UInt8(ascii: ",") else { throw .malformed }
            }
        }

        /// A number, `true`, `false` or `null`: the bytes up to the next delimiter. Their form is
        /// the JSON decoder's to judge.
        mutating func scalar() throws(Failure) {
            let start = index
            while index < bytes.count,
                ![UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), 0x20, 0x09, 0x0A, 0x0D].contains(
                    bytes[index])
            {
                index += 1
            }
            guard index > start else { throw .malformed }
        }

        /// A string, its escapes decoded to UTF-8 (`\uXXXX` surrogate pairs joined).
        mutating func string() throws(Failure) -> [UInt8] {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw .malformed }
            index += 1
            var decoded: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return decoded
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { throw .malformed }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                    case UInt8(ascii: "b"): decoded.append(0x08)
                    case UInt8(ascii: "f"): decoded.append(0x0C)
                    case UInt8(ascii: "n"): decoded.append(0x0A)
                    case UInt8(ascii: "r"): decoded.append(0x0D)
                    case UInt8(ascii: "t"): decoded.append(0x09)
                    case UInt8(ascii: "u"): decoded.append(contentsOf: try unicodeEscape())
                    default: throw .malformed
                    }
                case ..<0x20: throw .malformed
                default: decoded.append(byte)
                }
            }
            throw .malformed
        }

        mutating func hex4() throws(Failure) -> UInt32 {
            guard index + 4 <= bytes.count else { throw .malformed }
            var value: UInt32 = 0
            for byte in bytes[index..<index + 4] {
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw .malformed
                }
                value = value << 4 | UInt32(digit)
            }
            index += 4
            return value
        }

        /// The UTF-8 of a `\uXXXX` escape (after the `u`), joining a surrogate pair; a lone
        /// surrogate is kept as its code unit's bytes, so two different ones still differ.
        mutating func unicodeEscape() throws(Failure) -> [UInt8] {
            var unit = try hex4()
            if (0xD800..<0xDC00).contains(unit), index + 6 <= bytes.count, bytes[index] == UInt8(ascii: "\\"),
                bytes[index + 1] == UInt8(ascii: "u")
            {
                let saved = index
                index += 2
                let low = try hex4()
                if (0xDC00..<0xE000).contains(low) {
                    unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    index = saved
                }
            }
            guard let scalar = Unicode.Scalar(unit) else {
                return [0xFF, UInt8(unit >> 8), UInt8(unit & 0xFF)]  // a lone surrogate: not UTF-8, but distinct
            }
            return Array(String(Character(scalar)).utf8)
        }
    }
}

/// One CBOR data item (RFC 8949), as WebAuthn carries them: integers, byte and text strings,
/// arrays, maps, simple values and floats. Tags are skipped: a tagged item is its content.
public enum CBOR: Hashable, Sendable {
    case unsigned(UInt64)
    /// The negative integer `-1 - n`.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    /// Entries in the order they were written; no key twice.
    case map([Entry])
    case bool(Bool)
    case null
    case undefined
    /// A simple value other than false, true, null and undefined.
    case simple(UInt8)
    case float(Double)

    public struct Entry: Hashable, Sendable {
        public let key: CBOR
        public let value: CBOR
        public init(_ key: CBOR, _ value: CBOR) {
            self.key = key
            self.value = value
        }
    }

    /// The integer, when it is one that fits an `Int64`.
    public var integer: Int64? {
        switch self {
        case .unsigned(let value): value <= UInt64(Int64.max) ? Int64(value) : nil
        case .negative(let value): value <= UInt64(Int64.max) ? -1 - Int64(value) : nil
        default: nil
        }
    }

    /// The value under `key` in a map.
    public subscript(key: CBOR) -> CBOR? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    public subscript(key: Int64) -> CBOR? { self[key >= 0 ? .unsigned(UInt64(key)) : .negative(UInt64(-1 - key))] }
    public subscript(key: String) -> CBOR? { self[.text(key)] }

    public var bytes: [UInt8]? {
        if case .bytes(let value) = self { value } else { nil }
    }

    public var text: String? {
        if case .text(let value) = self { value } else { nil }
    }

    /// Decodes exactly one item from `bytes`: bytes after it are refused, and so are more than
    /// `CBORReader.maximumSize` bytes.
    public static func decode(_ bytes: [UInt8]) throws(WebAuthnError) -> CBOR {
        guard bytes.count <= CBORReader.maximumSize else {
            throw CBORReader.failure("it is \(bytes.count) bytes long; at most \(CBORReader.maximumSize) are read")
        }
        var reader = CBORReader(bytes[...])
        let item = try reader.item(depth: 0)
        guard reader.isAtEnd else {
            throw CBORReader.failure("\(reader.remaining) bytes follow the CBOR item")
        }
        return item
    }

    /// Decodes one item at the start of `bytes`; returns it and how many bytes it took.
    public static func decodePrefix(_ bytes: ArraySlice<UInt8>) throws(WebAuthnError) -> (CBOR, Int) {
        guard bytes.count <= CBORReader.maximumSize else {
            throw CBORReader.failure("it is \(bytes.count) bytes long; at most \(CBORReader.maximumSize) are read")
        }
        var reader = CBORReader(bytes)
        let item = try reader.item(depth: 0)
        return (item, bytes.count - reader.remaining)
    }
}

/// Reads CBOR items, checking every length against what is left before reading it.
struct CBORReader {
    /// How deep arrays, maps and tags may nest (the outermost item is depth 1).
    static let maximumDepth = 16
    /// How many entries one array or map may hold. WebAuthn's largest are a few: an attestation
    /// statement's members, a certificate chain, a COSE key's parameters.
    static let maximumEntries = 256
    /// How many items one document may hold in all, so the work a document can ask for is
    /// bounded whatever its shape.
    static let maximumItems = 4096
    /// How many bytes a document may be: an attestation object with a long certificate chain
    /// is a few kilobytes.
    static let maximumSize = 64 * 1024

    /// Items read so far.
    private var items = 0

    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    var remaining: Int { bytes.count }
    var isAtEnd: Bool { bytes.isEmpty }

    static func failure(_ message: String) -> WebAuthnError {
        WebAuthnError(.malformedCBOR, "malformed CBOR: \(message)")
    }

    private mutating func byte() throws(WebAuthnError) -> UInt8 {
        guard let first = bytes.first else { throw Self.failure("it ends in the middle of an item") }
        bytes = bytes.dropFirst()
        return first
    }

    private mutating func take(_ count: UInt64) throws(WebAuthnError) -> ArraySlice<UInt8> {
        guard count <= UInt64(bytes.count) else {
            throw Self.failure("an item claims \(count) bytes where \(bytes.count) are left")
        }
        let taken = bytes.prefix(Int(count))
        bytes = bytes.dropFirst(Int(count))
        return taken
    }

    private mutating func argument(_ info: UInt8) throws(WebAuthnError) -> UInt64 {
        switch info {
        case 0..<24: return UInt64(info)
        case 24...27:
            var value: UInt64 = 0
            for byte in try take(1 << UInt64(info - 24)) { value = value << 8 | UInt64(byte) }
            return value
        default: throw Self.failure("additional information \(info) is reserved")
        }
    }

    /// A count of elements or bytes that must fit in what is left (each element takes a byte
    /// at least), so no allocation is sized by an attacker's number.
    private func count(_ value: UInt64, perElement: UInt64 = 1) throws(WebAuthnError) -> Int {
        guard value <= UInt64(bytes.count) / perElement else {
            throw Self.failure("an item claims \(value) elements where \(bytes.count) bytes are left")
        }
        return Int(value)
    }

    mutating func item(depth: Int) throws(WebAuthnError) -> CBOR {
        items += 1
        guard items <= Self.maximumItems else {
            throw Self.failure("it holds more than \(Self.maximumItems) items")
        }
        let initial = try byte()
        let major = initial >> 5
        let info = initial & 0x1f
        if info == 31 { return try indefinite(major: major, depth: depth) }
        switch major {
        case 0: return .unsigned(try argument(info))
        case 1: return .negative(try argument(info))
        case 2: return .bytes(Array(try take(try argument(info))))
        case 3: return .text(try text(try take(try argument(info))))
        case 4:
            let elements = try entries(try count(try argument(info)))
            try enter(depth)
            var array: [CBOR] = []
            array.reserveCapacity(elements)
            for _ in 0..<elements { array.append(try item(depth: depth + 1)) }
            return .array(array)
        case 5:
            let entries = try entries(try count(try argument(info), perElement: 2))
            try enter(depth)
            var map: [CBOR.Entry] = []
            var keys: Set<CBOR> = []
            map.reserveCapacity(entries)
            for _ in 0..<entries { try append(to: &map, keys: &keys, depth: depth) }
            return .map(map)
        case 6:
            _ = try argument(info)
            try enter(depth)
            return try item(depth: depth + 1)
        default: return try simple(info)
        }
    }

    /// An array's or map's entry count, within `maximumEntries`.
    private func entries(_ count: Int) throws(WebAuthnError) -> Int {
        guard count <= Self.maximumEntries else {
            throw Self.failure("an array or map claims \(count) entries; at most \(Self.maximumEntries) are read")
        }
        return count
    }

    private func enter(_ depth: Int) throws(WebAuthnError) {
        guard depth < Self.maximumDepth else {
            throw Self.failure("items nest deeper than \(Self.maximumDepth) levels")
        }
    }

    /// Reads one entry into `map`; `keys` holds the keys read so far, so a key seen twice is
    /// found by one lookup, not by comparing it with every earlier key.
    private mutating func append(to map: inout [CBOR.Entry], keys: inout Set<CBOR>, depth: Int) throws(WebAuthnError) {
        let key = try item(depth: depth + 1)
        let value = try item(depth: depth + 1)
        guard keys.insert(key).inserted else { throw Self.failure("a map holds the key \(key) twice") }
        map.append(CBOR.Entry(key, value))
    }

    private func text(_ bytes: ArraySlice<UInt8>) throws(WebAuthnError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw Self.failure("a text string is not UTF-8")
        }
        return text
    }

    private mutating func simple(_ info: UInt8) throws(WebAuthnError) -> CBOR {
        switch info {
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        case 23: return .undefined
        case 0..<20: return .simple(info)
        case 24:
            let value = try byte()
            guard value >= 32 else { throw Self.failure("simple value \(value) is written in two bytes") }
            return .simple(value)
        case 25:
            let half = try take(2)
            return .float(Self.half(UInt16(half[half.startIndex]) << 8 | UInt16(half[half.startIndex + 1])))
        case 26: return .float(Double(Float(bitPattern: UInt32(truncatingIfNeeded: try argument(info)))))
        case 27: return .float(Double(bitPattern: try argument(info)))
        default: throw Self.failure("additional information \(info) is reserved")
        }
    }

    /// An IEEE 754 half-precision number (RFC 8949 appendix D).
    private static func half(_ bits: UInt16) -> Double {
        let exponent = Int(bits >> 10) & 0x1f
        let mantissa = Double(bits & 0x3ff)
        let magnitude: Double =
            switch exponent {
            case 0: mantissa * 0x1p-24
            case 31: mantissa == 0 ? .infinity : .nan
            default: (mantissa + 1024) * Double(sign: .plus, exponent: exponent - 25, significand: 1)
            }
        return bits & 0x8000 != 0 ? -magnitude : magnitude
    }

    /// An indefinite-length string, array or map (ended by the "break" byte 0xff).
    private mutating func indefinite(major: UInt8, depth: Int) throws(WebAuthnError) -> CBOR {
        switch major {
        case 2, 3:
            var joined: [UInt8] = []
            while true {
                let initial = try byte()
                if initial == 0xff { break }
                guard initial >> 5 == major, initial & 0x1f != 31 else {
                    throw Self.failure("a chunk of an indefinite-length string is of another kind")
                }
                joined.append(contentsOf: try take(try argument(initial & 0x1f)))
            }
            return major == 2 ? .bytes(joined) : .text(try text(joined[...]))
        case 4, 5:
            try enter(depth)
            var array: [CBOR] = []
            var map: [CBOR.Entry] = []
            var keys: Set<CBOR> = []
            while true {
                guard let next = bytes.first else { throw Self.failure("an indefinite-length item has no end") }
                if next == 0xff {
                    bytes = bytes.dropFirst()
                    break
                }
                _ = try entries(array.count + map.count + 1)
                if major == 4 {
                    array.append(try item(depth: depth + 1))
                } else {
                    try append(to: &map, keys: &keys, depth: depth)
                }
            }
            return major == 4 ? .array(array) : .map(map)
        case 7: throw Self.failure("a break byte stands outside an indefinite-length item")
        default: throw Self.failure("major type \(major) cannot have an indefinite length")
        }
    }
}

import TwofoldAPI

/// A JSON object of the simplest shape, read in one pass over its bytes: members whose values
/// are strings, `true`, `false` or `null`, with names and strings of printable ASCII and no
/// escapes. That is what a second-step body is (`{"tempToken":"…","code":"123456"}`), and
/// reading it this way costs a fraction of `JSONDecoder`, which was ~2 % of a sign-in's CPU.
///
/// Anything else — an escape, a number, an array, a nested object, other text, a name given
/// twice, bytes after the object — is not read (`nil`), and the body goes to `JSONDecoder`, so
/// its answers (and its errors) stay exactly as they were.
struct FlatJSONObject {
    enum Value {
        case string(String)
        case bool(Bool)
        case null
    }

    private var members: [String: Value] = [:]

    subscript(name: String) -> Value? { members[name] }

    init?(_ bytes: UnsafeRawBufferPointer) {
        var reader = Reader(bytes: bytes)
        reader.skipSpace()
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        reader.skipSpace()
        if !reader.take(UInt8(ascii: "}")) {
            repeat {
                reader.skipSpace()
                guard let name = reader.string() else { return nil }
                reader.skipSpace()
                guard reader.take(UInt8(ascii: ":")) else { return nil }
                reader.skipSpace()
                guard let value = reader.value(), members.updateValue(value, forKey: name) == nil else { return nil }
                reader.skipSpace()
            } while reader.take(UInt8(ascii: ","))
            guard reader.take(UInt8(ascii: "}")) else { return nil }
        }
        reader.skipSpace()
        guard reader.atEnd else { return nil }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// JSON's whitespace: space, tab, line feed, carriage return.
        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        /// A string of printable ASCII other than `"` and `\`.
        mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                guard (0x20...0x7E).contains(bytes[index]), bytes[index] != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            guard index < bytes.count else { return nil }
            defer { index += 1 }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        }

        mutating func value() -> Value? {
            if index < bytes.count, bytes[index] == UInt8(ascii: "\"") { return string().map(Value.string) }
            if take(word: "true") { return .bool(true) }
            if take(word: "false") { return .bool(false) }
            if take(word: "null") { return .null }
            return nil
        }

        mutating func take(word: StaticString) -> Bool {
            let word = UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            guard bytes[index...].starts(with: word) else { return false }
            index += word.count
            return true
        }
    }
}

/// A request body that can be read from a `FlatJSONObject`: `nil` when a member it needs is
/// missing or of another type (`JSONDecoder` then reads the body and names the problem).
protocol FlatJSONDecodable: Decodable {
    init?(flat object: FlatJSONObject)
}

extension TOTPValidateRequest: FlatJSONDecodable {
    init?(flat object: FlatJSONObject) {
        guard case .string(let tempToken)? = object["tempToken"], case .string(let code)? = object["code"] else {
            return nil
        }
        let trustDevice: Bool?
        switch object["trustDevice"] {
        case nil, .null?: trustDevice = nil
        case .bool(let value)?: trustDevice = value
        case .string?: return nil
        }
        self.init(tempToken: tempToken, code: code, trustDevice: trustDevice)
    }
}

import Foundation

/// The members a `Decodable` type reads at its top level, and which of them it requires: found
/// by decoding it from a decoder that answers every question with a placeholder and writes
/// down what it was asked. A member read with `decodeIfPresent` (an optional property) is
/// optional; one read with `decode` is required.
struct DecodedMembers: Equatable, CustomStringConvertible {
    var required: Set<String> = []
    var optional: Set<String> = []

    var all: Set<String> { required.union(optional) }
    var description: String { "required \(required.sorted()), optional \(optional.sorted())" }

    /// The members `type` reads, or `nil` when it is not read as a JSON object.
    static func of(_ type: any Decodable.Type) -> DecodedMembers? {
        let recorder = KeyRecordingDecoder(depth: 0)
        _ = try? type.init(from: recorder)
        return recorder.log.isObject ? recorder.log.members : nil
    }
}

/// The members a `Codable` type writes at its top level: all of them when every optional member
/// has a value, and the ones it always writes (its smallest value's).
struct EncodedMembers: Equatable, CustomStringConvertible {
    var always: Set<String>
    var all: Set<String>
    var description: String { "always \(always.sorted()), sometimes \(all.subtracting(always).sorted())" }

    /// `nil` when `type` is not written as a JSON object.
    static func of(_ type: any Codable.Type) -> EncodedMembers? {
        func keys(leavingOptionalsOut: Bool) -> Set<String>? {
            guard
                let value = try? type.init(
                    from: KeyRecordingDecoder(depth: 0, leavesOptionalsOut: leavingOptionalsOut)),
                let data = try? JSONEncoder().encode(value),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { return nil }
            return Set(object.keys)
        }
        guard let all = keys(leavingOptionalsOut: false), let always = keys(leavingOptionalsOut: true) else {
            return nil
        }
        return EncodedMembers(always: always, all: all)
    }
}

/// What a `KeyRecordingDecoder` was asked.
final class KeyLog {
    var isObject = false
    var members = DecodedMembers()
}

/// A decoder whose containers hand out placeholders (empty strings, zeros, `false`, empty
/// objects) and record the keys asked of the top-level keyed container.
struct KeyRecordingDecoder: Decoder {
    let depth: Int
    /// Whether optional members are left out (`decodeIfPresent` answers `nil`), for the smallest
    /// value of a type; otherwise every member gets a placeholder, for the largest.
    let leavesOptionalsOut: Bool
    let log = KeyLog()
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]

    init(depth: Int, leavesOptionalsOut: Bool = false) {
        self.depth = depth
        self.leavesOptionalsOut = leavesOptionalsOut
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if depth == 0 { log.isObject = true }
        return KeyedDecodingContainer(Keyed<Key>(depth: depth, log: log, leavesOptionalsOut: leavesOptionalsOut))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { Unkeyed(depth: depth) }
    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        Single(depth: depth, leavesOptionalsOut: leavesOptionalsOut)
    }

    /// A placeholder of `type`: decoded from a deeper recorder, whose questions are not logged.
    static func placeholder<T: Decodable>(_ type: T.Type, depth: Int, leavesOptionalsOut: Bool = false) throws -> T {
        switch type {
        case is String.Type: return "" as! T
        case is Bool.Type: return false as! T
        case is Int.Type: return 0 as! T
        case is Int64.Type: return Int64(0) as! T
        case is Float.Type: return Float(0) as! T
        case is Int8.Type, is Int16.Type, is Int32.Type, is UInt.Type, is UInt8.Type, is UInt16.Type, is UInt32.Type,
            is UInt64.Type:
            return try T(from: NumberDecoder())
        case is Double.Type: return 0.0 as! T
        case is UUID.Type: return UUID() as! T
        case is Date.Type: return Date(timeIntervalSince1970: 0) as! T
        default: return try T(from: KeyRecordingDecoder(depth: depth + 1, leavesOptionalsOut: leavesOptionalsOut))
        }
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let depth: Int
        let log: KeyLog
        var leavesOptionalsOut = false
        var codingPath: [any CodingKey] = []
        var allKeys: [Key] { [] }

        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool { false }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            if depth == 0 { log.members.required.insert(key.stringValue) }
            return try KeyRecordingDecoder.placeholder(type, depth: depth, leavesOptionalsOut: leavesOptionalsOut)
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            try optional(type, key)
        }

        // The standard library's own overloads for these types would otherwise ask `decode`.
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optional(type, key) }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optional(type, key) }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optional(type, key) }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optional(type, key) }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(type, key) }
        func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optional(type, key) }
        func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optional(type, key) }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optional(type, key) }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optional(type, key) }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optional(type, key) }
        func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optional(type, key) }
        func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optional(type, key) }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optional(type, key) }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optional(type, key) }

        private func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
            if depth == 0 { log.members.optional.insert(key.stringValue) }
            if leavesOptionalsOut { return nil }
            return try KeyRecordingDecoder.placeholder(type, depth: depth, leavesOptionalsOut: leavesOptionalsOut)
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            KeyedDecodingContainer(Keyed<NestedKey>(depth: depth + 1, log: KeyLog()))
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            Unkeyed(depth: depth + 1)
        }

        func superDecoder() throws -> any Decoder { KeyRecordingDecoder(depth: depth + 1) }
        func superDecoder(forKey key: Key) throws -> any Decoder { KeyRecordingDecoder(depth: depth + 1) }
    }

    /// An empty array.
    struct Unkeyed: UnkeyedDecodingContainer {
        let depth: Int
        var codingPath: [any CodingKey] = []
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }

        mutating func decodeNil() throws -> Bool { true }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            throw DecodingError.valueNotFound(type, .init(codingPath: [], debugDescription: "empty"))
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            KeyedDecodingContainer(Keyed<NestedKey>(depth: depth + 1, log: KeyLog()))
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { Unkeyed(depth: depth + 1) }
        mutating func superDecoder() throws -> any Decoder { KeyRecordingDecoder(depth: depth + 1) }
    }

    struct Single: SingleValueDecodingContainer {
        let depth: Int
        var leavesOptionalsOut = false
        var codingPath: [any CodingKey] = []

        func decodeNil() -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try KeyRecordingDecoder.placeholder(type, depth: depth, leavesOptionalsOut: leavesOptionalsOut)
        }
    }
}

/// A decoder of one number, zero, for the integer types the placeholders do not spell out.
struct NumberDecoder: Decoder, SingleValueDecodingContainer {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw DecodingError.typeMismatch(type, .init(codingPath: [], debugDescription: "a number"))
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "a number"))
    }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }
    func decodeNil() -> Bool { false }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard
            let zero = (0 as Int8) as? T ?? (0 as Int16) as? T ?? (0 as Int32) as? T ?? (0 as UInt) as? T
                ?? (0 as UInt8) as? T ?? (0 as UInt16) as? T ?? (0 as UInt32) as? T ?? (0 as UInt64) as? T
        else { throw DecodingError.typeMismatch(type, .init(codingPath: [], debugDescription: "not a number")) }
        return zero
    }
}

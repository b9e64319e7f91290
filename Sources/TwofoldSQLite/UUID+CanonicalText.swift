import Foundation

/// UUIDs as text: upper case (`E621E1F8-C36C-495A-93FC-0C247A3E6E5F`), as `uuidString` writes
/// them, sqlite-kit stores them and access tokens carry them; written and read without
/// Foundation's `uuidString` / `UUID(uuidString:)`, which go through `snprintf` and `sscanf`
/// (a sign-in reads and writes a dozen).
extension UUID {
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// The same text as `uuidString`.
    package var canonicalText: String {
        withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                var position = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    text[position] = Self.hexDigits[Int(byte >> 4)]
                    text[position + 1] = Self.hexDigits[Int(byte & 0x0F)]
                    position += 2
                }
                return position
            }
        }
    }

    /// Reads what `UUID(uuidString:)` reads (hex digits of either case, hyphens at 8, 13, 18
    /// and 23); `nil` for anything else.
    package init?(canonicalText text: String) {
        var text = text
        guard let uuid = text.withUTF8({ UUID(canonicalBytes: $0) }) else { return nil }
        self = uuid
    }

    /// `init?(canonicalText:)` on the text's UTF-8 bytes (as SQLite hands a column over).
    init?(canonicalBytes utf8: UnsafeBufferPointer<UInt8>) {
        guard utf8.count == 36 else { return nil }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &uuid) { bytes -> Bool in
            var byteIndex = 0
            var high: UInt8?
            for offset in 0..<36 {
                let character = utf8[offset]
                if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                    guard character == UInt8(ascii: "-") else { return false }
                    continue
                }
                let nibble: UInt8
                switch character {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
                case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
                case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
                default: return false
                }
                if let first = high {
                    bytes[byteIndex] = first << 4 | nibble
                    byteIndex += 1
                    high = nil
                } else {
                    high = nibble
                }
            }
            return true
        }
        guard parsed else { return nil }
        self.init(uuid: uuid)
    }
}

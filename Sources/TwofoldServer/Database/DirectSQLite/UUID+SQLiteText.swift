import Foundation

/// UUIDs as sqlite-kit stores them: upper-case text (`E621E1F8-C36C-495A-93FC-0C247A3E6E5F`),
/// written and read without Foundation's `uuidString` / `UUID(uuidString:)`, which go through
/// `snprintf` and `sscanf` (a sign-in reads and writes a dozen).
extension UUID {
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// The same text as `uuidString`.
    var sqliteText: String {
        let bytes = withUnsafeBytes(of: uuid) { Array($0) }
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(Self.hexDigits[Int(byte >> 4)])
            text.append(Self.hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Reads what `UUID(uuidString:)` reads (hex digits of either case, hyphens at 8, 13, 18
    /// and 23); `nil` for anything else.
    init?(sqliteText text: String) {
        let utf8 = text.utf8
        guard utf8.count == 36 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 16)
        var byteIndex = 0
        var high: UInt8?
        for (offset, character) in utf8.enumerated() {
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard character == UInt8(ascii: "-") else { return nil }
                continue
            }
            let nibble: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            if let first = high {
                bytes[byteIndex] = first << 4 | nibble
                byteIndex += 1
                high = nil
            } else {
                high = nibble
            }
        }
        self.init(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}

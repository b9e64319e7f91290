/// RFC 3986 percent-encoding, written out so that decoding failures are reported rather than
/// silently passed through.
enum PercentEncoding {
    /// Unreserved characters plus `@`, which seed 000's labels leave as is (`user@email.com`).
    static let labelSafe: Set<UInt8> = unreserved.union([UInt8(ascii: "@")])
    static let queryValueSafe: Set<UInt8> = unreserved

    static let unreserved: Set<UInt8> = Set(
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8))

    static func encode(_ text: String, allowing safe: Set<UInt8>) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        for byte in text.utf8 {
            if safe.contains(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes `%XX` escapes (and `+` as a space in query values); `nil` for a truncated or
    /// non-hex escape or bytes that are not UTF-8.
    static func decode(_ text: Substring, plusIsSpace: Bool) -> String? {
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count,
                    let high = hexValue(bytes[index + 1]),
                    let low = hexValue(bytes[index + 2])
                else { return nil }
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        // Decoding replaces invalid UTF-8 with U+FFFD; a round trip tells whether it had to.
        let decoded = String(decoding: output, as: UTF8.self)
        return Array(decoded.utf8) == output ? decoded : nil
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

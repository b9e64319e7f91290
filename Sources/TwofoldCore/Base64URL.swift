/// Unpadded base64url (RFC 4648 §5), as JOSE and WebAuthn write binary in text: the project's
/// one implementation. Decoding is strict: only the canonical spelling of some bytes decodes
/// (no padding, no other alphabet, no set bits after the last byte), so no token, signature or
/// credential ID has two spellings that mean the same bytes.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Each byte's value in the alphabet, or 0xFF.
    private static let values: [UInt8] = {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { values[Int(character)] = UInt8(index) }
        return values
    }()

    /// The text of `bytes`: four characters for three bytes, two for a last single byte, three
    /// for a last pair.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let count = bytes.count
        let length = count / 3 * 4 + (count % 3 == 0 ? 0 : count % 3 + 1)
        return String(unsafeUninitializedCapacity: length) { text in
            var written = 0
            var iterator = bytes.makeIterator()
            while let first = iterator.next() {
                let second = iterator.next()
                let third = second == nil ? nil : iterator.next()
                let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
                text[written] = alphabet[Int(group >> 18)]
                text[written + 1] = alphabet[Int(group >> 12 & 63)]
                written += 2
                if second != nil {
                    text[written] = alphabet[Int(group >> 6 & 63)]
                    written += 1
                }
                if third != nil {
                    text[written] = alphabet[Int(group & 63)]
                    written += 1
                }
            }
            return written
        }
    }

    /// The bytes `text` spells, or `nil` when it is not canonical unpadded base64url.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 != 1 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.count * 3 / 4)
        var index = 0
        while index < characters.count {
            let end = min(index + 4, characters.count)
            var group: UInt32 = 0
            for position in index..<end {
                let value = values[Int(characters[position])]
                guard value != 0xFF else { return nil }
                group = group << 6 | UInt32(value)
            }
            switch end - index {
            case 4:
                bytes += [UInt8(group >> 16), UInt8(group >> 8 & 0xFF), UInt8(group & 0xFF)]
            case 3:
                guard group & 0x03 == 0 else { return nil }
                bytes += [UInt8(group >> 10), UInt8(group >> 2 & 0xFF)]
            default:
                guard group & 0x0F == 0 else { return nil }
                bytes.append(UInt8(group >> 4))
            }
            index = end
        }
        return bytes
    }
}

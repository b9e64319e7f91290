/// Writes CBOR (RFC 8949: definite lengths, shortest arguments, map entries in the order given):
/// what an authenticator writes. The software authenticators of `TwofoldDevice` build their
/// attestation objects and COSE keys with it, and tests build or change payloads with it.
public enum CBOREncoder {
    public static func encode(_ item: CBOR) -> [UInt8] {
        var out: [UInt8] = []
        write(item, to: &out)
        return out
    }

    private static func head(_ major: UInt8, _ argument: UInt64, to out: inout [UInt8]) {
        let type = major << 5
        switch argument {
        case 0..<24: out.append(type | UInt8(argument))
        case 24...0xff: out += [type | 24, UInt8(argument)]
        case 0x100...0xffff:
            out += [type | 25] + (0..<2).reversed().map { UInt8(truncatingIfNeeded: argument >> ($0 * 8)) }
        case 0x1_0000...0xffff_ffff:
            out += [type | 26] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: argument >> ($0 * 8)) }
        default: out += [type | 27] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: argument >> ($0 * 8)) }
        }
    }

    private static func write(_ item: CBOR, to out: inout [UInt8]) {
        switch item {
        case .unsigned(let value): head(0, value, to: &out)
        case .negative(let value): head(1, value, to: &out)
        case .bytes(let bytes):
            head(2, UInt64(bytes.count), to: &out)
            out += bytes
        case .text(let text):
            head(3, UInt64(text.utf8.count), to: &out)
            out += Array(text.utf8)
        case .array(let items):
            head(4, UInt64(items.count), to: &out)
            for item in items { write(item, to: &out) }
        case .map(let entries):
            head(5, UInt64(entries.count), to: &out)
            for entry in entries {
                write(entry.key, to: &out)
                write(entry.value, to: &out)
            }
        case .bool(let value): out.append(value ? 0xf5 : 0xf4)
        case .null: out.append(0xf6)
        case .undefined: out.append(0xf7)
        case .simple(let value): if value < 24 { out.append(0xe0 | value) } else { out += [0xf8, value] }
        case .float(let value):
            out.append(0xfb)
            out += (0..<8).reversed().map { UInt8(truncatingIfNeeded: value.bitPattern >> ($0 * 8)) }
        }
    }
}

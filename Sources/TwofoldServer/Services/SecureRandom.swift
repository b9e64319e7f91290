import Crypto
import Foundation

/// Random bytes from BoringSSL's CSPRNG (seeded by the kernel), in one call. The standard
/// library's generator costs a `getrandom` system call for every eight bytes drawn a byte at a
/// time, and Foundation's `UUID()` opens `/dev/urandom` each time; a sign-in draws both often.
enum SecureRandom {
    static func bytes(_ count: Int) -> [UInt8] {
        SymmetricKey(size: SymmetricKeySize(bitCount: count * 8)).withUnsafeBytes { Array($0) }
    }

    /// A random (version 4, RFC 9562 §5.4) UUID.
    static func uuid() -> UUID {
        var bytes = bytes(16)
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}

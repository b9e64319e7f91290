import Foundation

/// Random bytes from the system CSPRNG (`getrandom`), eight bytes a system call where
/// `UInt8.random(in:using:)` spends one call a byte, and UUIDs without Foundation's `UUID()`,
/// which opens `/dev/urandom` every time; a sign-in draws both several times.
enum SecureRandom {
    static func bytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 7)
        while bytes.count < count {
            withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
        }
        return Array(bytes.prefix(count))
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

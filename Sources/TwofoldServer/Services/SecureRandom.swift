import Foundation

/// Random bytes from the system CSPRNG (`getrandom`), eight bytes a system call where
/// `UInt8.random(in:using:)` spends one call a byte, and time-ordered UUIDs for rows a sign-in
/// appends.
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

    /// A time-ordered (version 7, RFC 9562 §5.7) UUID: the millisecond of `time`, then 74
    /// random bits. For rows only ever appended (sessions, refresh tokens, audit events,
    /// failures): new keys land at the end of the key index, on the page the previous row
    /// wrote, instead of on a random page each, so a commit writes a few pages, not one a row.
    /// Such an id reveals when its row was made; never use one where that is a secret.
    static func timeOrderedUUID(at time: Date) -> UUID {
        var bytes = bytes(16)
        let milliseconds = UInt64(max(0, time.timeIntervalSince1970 * 1000).rounded(.down))
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
        bytes[6] = (bytes[6] & 0x0F) | 0x70
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}

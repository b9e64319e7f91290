import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Random bytes from the system CSPRNG, one system call for up to 256 of them
/// (`SystemRandomNumberGenerator` spends one a `UInt64`, and a sign-in asks for ~80 bytes), and
/// time-ordered UUIDs for rows a sign-in appends.
enum SecureRandom {
    static func bytes(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// Fills `buffer` from the system CSPRNG (`getentropy`, at most 256 bytes a call). Like
    /// `SystemRandomNumberGenerator`, stops the process if the system cannot give randomness:
    /// nothing secret may be made without it.
    static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let start = buffer.baseAddress else { return }
        var filled = 0
        while filled < buffer.count {
            let chunk = min(256, buffer.count - filled)
            guard getentropy(start + filled, chunk) == 0 else { fatalError("getentropy failed: errno \(errno)") }
            filled += chunk
        }
    }

    /// A time-ordered (version 7, RFC 9562 §5.7) UUID: the millisecond of `time`, then 74
    /// random bits. For rows only ever appended (sessions, refresh tokens, audit events,
    /// failures): new keys land at the end of the key index, on the page the previous row
    /// wrote, instead of on a random page each, so a commit writes a few pages, not one a row.
    /// Such an id reveals when its row was made; never use one where that is a secret.
    static func timeOrderedUUID(at time: Date) -> UUID {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            fill(UnsafeMutableRawBufferPointer(rebasing: bytes[6...]))
            let milliseconds = UInt64(max(0, time.timeIntervalSince1970 * 1000).rounded(.down))
            for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
            bytes[6] = (bytes[6] & 0x0F) | 0x70
            bytes[8] = (bytes[8] & 0x3F) | 0x80
        }
        return UUID(uuid: uuid)
    }
}

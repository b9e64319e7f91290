import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a stranger's attempts are counted (issue T): a client address, or for IPv6 its /64
/// (one subscriber's prefix, which a single host can fill with addresses). Anonymous sign-in
/// guards, SMS sign-in codes and their send budgets are kept per user *and* scope, so a stranger
/// elsewhere cannot lock the owner's sign-in or spend the owner's budget.
enum ClientScope {
    /// The scope of `address`: an IPv4 address as it is, an IPv6 address cut to its /64
    /// (however it is spelt), anything else as it is, and no address `-`.
    static func of(_ address: String?) -> String {
        guard let address, !address.isEmpty else { return "-" }
        var bytes = [UInt8](repeating: 0, count: 16)
        guard address.contains(":"), inet_pton(AF_INET6, address, &bytes) == 1 else { return address }
        // An IPv4-mapped address (`::ffff:a.b.c.d`, what a dual-stack listener reports for IPv4
        // clients) is that IPv4 address, not the one /64 all of them share.
        if bytes.prefix(10).allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return bytes.suffix(4).map(String.init).joined(separator: ".")
        }
        return bytes.prefix(8).map { String(format: "%02x", $0) }.joined() + "/64"
    }

    /// A stable identifier for `userID` within `scope`: the "flow" an SMS sign-in code belongs
    /// to, so each scope has its own live code and a stranger's request supersedes only theirs.
    static func flow(userID: UUID, scope: String) -> UUID {
        let digest = Array(SHA256.hash(data: Data("\(userID.uuidString)|\(scope)".utf8)))
        var bytes = Array(digest.prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50  // version 5-style: name-based
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}

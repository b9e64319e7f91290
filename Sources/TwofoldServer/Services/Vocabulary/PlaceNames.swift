import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Roughly where a request came from, as a phone asked to approve a sign-in shows it (issue Z).
/// Twofold carries no location database, so the place is the network, never the exact address:
/// an IPv4 address cut to its /24 ("network 203.0.113.x"), an IPv6 address to its /48, and the
/// networks a person recognises by name (this computer, a local network).
enum PlaceNames {
    static func of(_ address: String?) -> String {
        guard let address, !address.isEmpty else { return "an unknown network" }
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            return ipv4(withUnsafeBytes(of: v4.s_addr) { Array($0) })
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        guard inet_pton(AF_INET6, address, &bytes) == 1 else { return "an unknown network" }
        if bytes.prefix(10).allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return ipv4(Array(bytes.suffix(4)))
        }
        if bytes.prefix(15).allSatisfy({ $0 == 0 }), bytes[15] == 1 { return "this computer" }
        if bytes[0] & 0xFE == 0xFC || (bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80) { return "a local network" }
        let prefix = stride(from: 0, to: 6, by: 2).map {
            String(format: "%x", Int(bytes[$0]) << 8 | Int(bytes[$0 + 1]))
        }
        return "network \(prefix.joined(separator: ":"))::/48"
    }

    private static func ipv4(_ octets: [UInt8]) -> String {
        switch (octets[0], octets[1]) {
        case (127, _): return "this computer"
        case (10, _), (192, 168), (172, 16...31): return "a local network"
        default: return "network \(octets[0]).\(octets[1]).\(octets[2]).x"
        }
    }
}

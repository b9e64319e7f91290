import Foundation

/// A loopback port that takes connections and never answers them: a server that hangs, for
/// tests of timeouts and cancellation. Connections wait in the listen backlog until `close()`.
public final class SilentListener: @unchecked Sendable {
    // Safe: `socket` is set in `init` and closed once, under `lock`.
    private let lock = NSLock()
    private var socket: Int32
    /// The port it listens on, on 127.0.0.1.
    public let port: Int

    /// Listens on a free loopback port.
    public init() throws {
        socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = socket
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            Foundation.close(fd)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Stops listening; connections waiting are reset.
    public func close() {
        lock.withLock {
            if socket >= 0 { Foundation.close(socket) }
            socket = -1
        }
    }

    deinit { close() }
}

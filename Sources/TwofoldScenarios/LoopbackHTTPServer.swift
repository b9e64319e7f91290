import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small HTTP/1.1 server for the command-line tool's listeners (the SMS webhook, the testing
/// dashboard): one request per connection, each connection read on a thread of its own (at most
/// `connectionLimit` at once; more are closed unread), with bounded sizes and one deadline for
/// the whole request, so a slow or broken client holds up nobody else. A peer that goes away
/// never raises SIGPIPE. A request that is malformed, too big or too slow is answered 400
/// without reaching the handler.
public final class LoopbackHTTPServer: @unchecked Sendable {
    /// A request as the handler sees it.
    public struct Request: Sendable {
        /// `GET`, `POST`, …
        public let method: String
        /// The path, without its query.
        public let path: String
        /// The header fields, names in lower case.
        public let headers: [String: String]
        /// The body (`Content-Length` bytes).
        public let body: Data
        /// The port the request came in on (the server's), for checking `Host`.
        public let port: Int
    }

    /// The answer to a request.
    public struct Response: Sendable {
        /// The status code.
        public var status: Int
        /// Header fields to send (Content-Length and Connection are added).
        public var headers: [String: String]
        /// The body.
        public var body: Data

        /// An answer with `status`, `headers` and `body`.
        public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
            (self.status, self.headers, self.body) = (status, headers, body)
        }
    }

    /// Why the server could not start.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// The address is not `HOST:PORT` with an IPv4 host (or `localhost`).
        case badAddress(String)
        /// A socket call failed: the call, and its `errno`.
        case socket(String, Int32)
        /// What went wrong, in words.
        public var description: String {
            switch self {
            case .badAddress(let text): "\(text) is not HOST:PORT with an IPv4 host (or localhost)"
            case .socket(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
            }
        }
    }

    /// The port it listens on (the one asked for, or the one the system chose for 0).
    public let port: Int
    /// The IPv4 address it listens on (`localhost` is `127.0.0.1`).
    public let host: String
    /// The largest body taken.
    public let bodyLimit: Int
    // Safe: `socket` and `handler` are set once in `init`; `open` and `stopped` are read and
    // written under `lock` only.
    private let socket: Int32
    private let handler: @Sendable (Request) -> Response
    private let lock = NSLock()
    private var open = 0
    private var stopped = false

    static let headerLimit = 16 * 1024
    /// How long one request may take to arrive, whole, and one send of the answer may wait for a
    /// peer that does not read.
    static let requestDeadline: TimeInterval = 5
    /// Connections read at once.
    static let connectionLimit = 16

    /// Listens on `address` (`HOST:PORT`; port 0 lets the system choose), answering each request
    /// with `handler` (called on the connection's thread).
    public init(
        address: String, bodyLimit: Int = 64 * 1024, name: String = "http",
        handler: @escaping @Sendable (Request) -> Response
    ) throws {
        let parts = address.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let port = UInt16(parts[1]) else { throw Failure.badAddress(address) }
        let host = parts[0] == "localhost" ? "127.0.0.1" : String(parts[0])
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw Failure.badAddress(host) }
        #if canImport(Glibc)
            let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure.socket("socket", errno) }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            let code = errno
            close(descriptor)
            throw Failure.socket("bind \(host):\(port)", code)
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: actual.sin_port))
        self.host = host
        self.socket = descriptor
        self.bodyLimit = bodyLimit
        self.handler = handler
        let thread = Thread { [self] in serve(name) }
        thread.name = name
        thread.start()
    }

    /// Stops listening.
    public func stop() {
        let first = lock.withLock {
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        shutdown(socket, Int32(SHUT_RDWR))
        close(socket)
    }

    // MARK: Serving

    private func serve(_ name: String) {
        while true {
            let connection = accept(socket, nil, nil)
            if connection < 0 {
                let code = errno
                if lock.withLock({ stopped }) || code == EBADF || code == EINVAL { return }
                // Out of descriptors or memory for a moment (EMFILE, ENFILE, ENOBUFS, ENOMEM):
                // wait and go on serving rather than leave the socket listening unanswered.
                if code != EINTR && code != ECONNABORTED { usleep(100_000) }
                continue
            }
            #if canImport(Darwin)
                var on: Int32 = 1
                setsockopt(connection, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
            #endif
            let admitted = lock.withLock {
                guard open < Self.connectionLimit else { return false }
                open += 1
                return true
            }
            guard admitted else {
                close(connection)
                continue
            }
            let thread = Thread { [self] in
                let response =
                    read(connection, until: Date().addingTimeInterval(Self.requestDeadline)).map(handler)
                    ?? Response(status: 400)
                answer(connection, response)
                close(connection)
                lock.withLock { open -= 1 }
            }
            thread.name = name + "-connection"
            thread.start()
        }
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 202: "Accepted"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        default: "Status"
        }
    }

    private func answer(_ connection: Int32, _ response: Response) {
        var head = "HTTP/1.1 \(response.status) \(Self.reason(response.status))\r\n"
        for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(response.body.count)\r\nConnection: close\r\n\r\n"
        var bytes = Data(head.utf8)
        bytes.append(response.body)
        // A peer that stops reading frees its slot when a send has waited this long.
        var timeout = timeval(tv_sec: .init(Self.requestDeadline), tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        #if canImport(Glibc)
            let flags = Int32(MSG_NOSIGNAL)
        #else
            let flags: Int32 = 0
        #endif
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { send(connection, $0.baseAddress! + sent, bytes.count - sent, flags) }
            guard count > 0 else { return }
            sent += count
        }
    }

    /// Up to `count` bytes, waiting no later than `deadline`; 0 or less when none came.
    private func receive(_ connection: Int32, into buffer: inout [UInt8], upTo count: Int, before deadline: Date) -> Int
    {
        let left = deadline.timeIntervalSinceNow
        guard left > 0 else { return 0 }
        var timeout = timeval(tv_sec: .init(left), tv_usec: .init((left - left.rounded(.down)) * 1_000_000))
        if timeout.tv_sec == 0 && timeout.tv_usec == 0 { timeout.tv_usec = 1 }
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return recv(connection, &buffer, min(count, buffer.count), 0)
    }

    /// Reads one request by `deadline`; `nil` when it is malformed, too big or too slow.
    private func read(_ connection: Int32, until deadline: Date) -> Request? {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var headerEnd: Range<Data.Index>?
        while headerEnd == nil {
            guard data.count < Self.headerLimit else { return nil }
            let count = receive(connection, into: &buffer, upTo: buffer.count, before: deadline)
            guard count > 0 else { return nil }
            data.append(contentsOf: buffer[0..<count])
            headerEnd = data.range(of: Data("\r\n\r\n".utf8))
        }
        guard let headerEnd, let head = String(data: data[..<headerEnd.lowerBound], encoding: .utf8) else {
            return nil
        }
        let lines = head.components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count == 3, requestLine[2] == "HTTP/1.1" || requestLine[2] == "HTTP/1.0" else { return nil }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            // No control characters (a NUL, a bare CR or LF) and no field given twice: one reading.
            guard let colon = line.firstIndex(of: ":"),
                !line.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F })
            else { return nil }
            let name = line[..<colon].lowercased()
            guard fields[name] == nil else { return nil }
            fields[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length: Int
        if let declared = fields["content-length"] {
            guard !declared.isEmpty, declared.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(declared),
                (0...bodyLimit).contains(value)
            else { return nil }
            length = value
        } else {
            length = 0
        }
        guard fields["transfer-encoding"] == nil else { return nil }
        var body = Data(data[headerEnd.upperBound...])
        while body.count < length {
            let count = receive(connection, into: &buffer, upTo: length - body.count, before: deadline)
            guard count > 0 else { return nil }
            body.append(contentsOf: buffer[0..<count])
        }
        guard body.count == length else { return nil }
        let target = String(requestLine[1])
        let path = String(target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0])
        return Request(method: String(requestLine[0]), path: path, headers: fields, body: body, port: port)
    }
}

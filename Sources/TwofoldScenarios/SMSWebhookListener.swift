import Crypto
import Foundation
import TwofoldCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Listens for the server's SMS webhook (`TWOFOLD_SMS_PROVIDER=webhook`): each request is a
/// `POST` of `{"to": "+1…", "message": "…"}` signed `X-Twofold-Signature: sha256=<hex HMAC-SHA256
/// of the body>` with the shared secret. Messages whose signature holds are kept and answered
/// 204; any other request is answered 401 or 400 and dropped. Until `stop()`, each connection
/// is read on a thread of its own (at most `connectionLimit` at once; more are closed unread),
/// with bounded sizes and one deadline for the whole request, so a slow or broken sender holds
/// up nobody else; a peer that goes away never raises SIGPIPE.
public final class SMSWebhookListener: CodeInbox, @unchecked Sendable {
    /// A message the server sent.
    public struct Message: Decodable, Sendable, Equatable {
        /// The number the message was sent to.
        public let to: String
        /// The message's text.
        public let message: String
        /// The one-time code in the text, if any.
        public var code: String? { OneTimeCodeText.code(in: message) }
    }

    /// Why the listener could not start.
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
    // Safe: `socket` and `secret` are set once in `init`; `messages`, `refused` and `stopped`
    // are read and written under `lock` only.
    private let socket: Int32
    private let secret: SymmetricKey
    private let lock = NSLock()
    private var messages: [Message] = []
    private var refused = 0
    private var stopped = false
    /// How long `code(to:sentBy:)` waits.
    public var wait: TimeInterval = 30

    static let headerLimit = 16 * 1024
    static let bodyLimit = 64 * 1024
    /// How long one request may take to arrive, whole.
    static let requestDeadline: TimeInterval = 5
    /// Connections read at once.
    static let connectionLimit = 16
    // Safe: read and written under `lock` only.
    private var open = 0

    /// Listens on `address` (`HOST:PORT`; port 0 lets the system choose) for webhooks signed
    /// with `secret`.
    public init(address: String, secret: String) throws {
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
        self.secret = SymmetricKey(data: Data(secret.utf8))
        let thread = Thread { [self] in serve() }
        thread.name = "sms-webhook"
        thread.start()
    }

    /// The webhook URL to give the server (`TWOFOLD_SMS_WEBHOOK_URL`).
    public var url: String { "http://\(host):\(port)/sms" }

    /// Every message kept so far, in the order they came.
    public var received: [Message] { lock.withLock { messages } }

    /// Requests answered 401 or 400 (a wrong signature, a malformed request).
    public var refusedCount: Int { lock.withLock { refused } }

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

    // MARK: CodeInbox

    /// Runs `trigger`, then waits up to `wait` seconds for a message with a code to `destination`; throws
    /// `NoCodeArrived` when none came.
    public func code(to destination: String, sentBy trigger: @Sendable () async throws -> Void) async throws -> String {
        let mark = lock.withLock { messages.count }
        try await trigger()
        let deadline = Date().addingTimeInterval(wait)
        while Date() < deadline {
            let found = lock.withLock { messages.dropFirst(mark).first { $0.to == destination && $0.code != nil } }
            if let code = found?.code { return code }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw NoCodeArrived(destination: destination, waited: wait)
    }

    // MARK: Serving

    private func serve() {
        while true {
            let connection = accept(socket, nil, nil)
            if connection < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
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
                answer(connection, status: handle(connection, until: Date().addingTimeInterval(Self.requestDeadline)))
                close(connection)
                lock.withLock { open -= 1 }
            }
            thread.name = "sms-webhook-connection"
            thread.start()
        }
    }

    private func answer(_ connection: Int32, status: Int) {
        let reason = status == 204 ? "No Content" : status == 401 ? "Unauthorized" : "Bad Request"
        let answer = Array("HTTP/1.1 \(status) \(reason)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
        #if canImport(Glibc)
            let flags = Int32(MSG_NOSIGNAL)
        #else
            let flags: Int32 = 0
        #endif
        _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, flags) }
    }

    /// Up to `buffer.count` bytes, waiting no later than `deadline`; 0 or less when none came.
    private func receive(_ connection: Int32, into buffer: inout [UInt8], upTo count: Int, before deadline: Date) -> Int
    {
        let left = deadline.timeIntervalSinceNow
        guard left > 0 else { return 0 }
        var timeout = timeval(tv_sec: .init(left), tv_usec: .init((left - left.rounded(.down)) * 1_000_000))
        if timeout.tv_sec == 0 && timeout.tv_usec == 0 { timeout.tv_usec = 1 }
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return recv(connection, &buffer, min(count, buffer.count), 0)
    }

    /// Reads one request by `deadline`; its status: 204 kept, 401 unsigned or wrongly signed,
    /// 400 malformed, too big or too slow.
    private func handle(_ connection: Int32, until deadline: Date) -> Int {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var headerEnd: Range<Data.Index>?
        while headerEnd == nil {
            guard data.count < Self.headerLimit else { return refuse(400) }
            let count = receive(connection, into: &buffer, upTo: buffer.count, before: deadline)
            guard count > 0 else { return refuse(400) }
            data.append(contentsOf: buffer[0..<count])
            headerEnd = data.range(of: Data("\r\n\r\n".utf8))
        }
        guard let headerEnd, let head = String(data: data[..<headerEnd.lowerBound], encoding: .utf8) else {
            return refuse(400)
        }
        let lines = head.components(separatedBy: "\r\n")
        guard lines.first?.hasPrefix("POST ") == true else { return refuse(400) }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return refuse(400) }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        guard let length = fields["content-length"].flatMap({ Int($0) }), (0...Self.bodyLimit).contains(length) else {
            return refuse(400)
        }
        var body = Data(data[headerEnd.upperBound...])
        while body.count < length {
            let count = receive(connection, into: &buffer, upTo: length - body.count, before: deadline)
            guard count > 0 else { return refuse(400) }
            body.append(contentsOf: buffer[0..<count])
        }
        guard body.count == length else { return refuse(400) }
        guard let signature = fields["x-twofold-signature"], signature.hasPrefix("sha256=") else { return refuse(401) }
        let expected = HMAC<SHA256>.authenticationCode(for: body, using: secret)
            .map { String(format: "%02x", $0) }.joined()
        guard ConstantTime.equals(String(signature.dropFirst("sha256=".count)).lowercased(), expected) else {
            return refuse(401)
        }
        guard let message = try? JSONDecoder().decode(Message.self, from: body) else { return refuse(400) }
        lock.withLock { messages.append(message) }
        return 204
    }

    private func refuse(_ status: Int) -> Int {
        lock.withLock { refused += 1 }
        return status
    }
}

import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Email through an SMTP server (RFC 5321), `TWOFOLD_EMAIL_PROVIDER=smtp`: one connection per
/// message, TLS from the first byte (`tls`) or after STARTTLS (`starttls`, RFC 3207), AUTH PLAIN
/// or LOGIN (RFC 4954) only over TLS. Any reply other than the expected one is a failure that
/// the delivery worker retries; the error names the command and reply code, never the server's
/// text (which may echo the address).
struct SMTPEmailProvider: MessageProvider {
    let name = "smtp"
    let settings: Configuration.SMTPSettings
    let group: any EventLoopGroup
    let tls: NIOSSLContext
    /// The whole conversation's limit; a server that stops answering is given up on and retried.
    let timeout: Duration

    init(
        settings: Configuration.SMTPSettings, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        timeout: Duration = .seconds(30)
    ) throws {
        self.settings = settings
        self.group = group
        self.timeout = timeout
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        if let caFile = settings.caFile { configuration.additionalTrustRoots = [.file(caFile)] }
        self.tls = try NIOSSLContext(configuration: configuration)
    }

    func deliver(_ message: OutgoingMessage) async throws {
        let data = try SMTPMessage.render(
            from: settings.from, to: message.destination, subject: message.subject, body: message.body,
            date: Date())
        let channel = try await connect()
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                try await channel.executeThenClose { inbound, outbound in
                    var session = SMTPSession(inbound: inbound.makeAsyncIterator(), outbound: outbound)
                    try await converse(&session, channel: channel.channel, recipient: message.destination, data: data)
                }
            }
            tasks.addTask { [timeout] in
                try await Task.sleep(for: timeout)
                channel.channel.close(promise: nil)
                throw DeliveryError("SMTP server did not finish within \(timeout)")
            }
            defer { tasks.cancelAll() }
            try await tasks.next()
        }
    }

    private func connect() async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        let security = settings.security
        let host = settings.host
        let tls = self.tls
        do {
            return try await ClientBootstrap(group: group)
                .connectTimeout(.seconds(10))
                .connect(host: host, port: settings.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if security == .tls {
                            try channel.pipeline.syncOperations.addHandler(
                                NIOSSLClientHandler(context: tls, serverHostname: Self.sniName(host)))
                        }
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw DeliveryError("cannot connect to the SMTP server \(host):\(settings.port): \(error)")
        }
    }

    /// The conversation after the connection opens: greeting, EHLO, STARTTLS, AUTH, one message, QUIT.
    private func converse(_ session: inout SMTPSession, channel: any Channel, recipient: String, data: String)
        async throws
    {
        try await session.expect(220, after: "greeting")
        var extensions = try await session.command("EHLO \(Self.clientName)", expect: 250, name: "EHLO")
        if settings.security == .starttls {
            guard extensions.contains(where: { $0.uppercased() == "STARTTLS" }) else {
                throw DeliveryError("SMTP server does not offer STARTTLS; refusing to continue in clear")
            }
            _ = try await session.command("STARTTLS", expect: 220, name: "STARTTLS")
            let (tls, host) = (self.tls, settings.host)
            try await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.addHandler(
                    NIOSSLClientHandler(context: tls, serverHostname: Self.sniName(host)), position: .first)
            }.get()
            extensions = try await session.command("EHLO \(Self.clientName)", expect: 250, name: "EHLO")
        }
        if let username = settings.username, let password = settings.password {
            try await authenticate(&session, username: username, password: password, extensions: extensions)
        }
        let utf8 = extensions.contains { $0.uppercased() == "SMTPUTF8" } && !recipient.allSatisfy(\.isASCII)
        _ = try await session.command(
            "MAIL FROM:<\(settings.from)>" + (utf8 ? " SMTPUTF8" : ""), expect: 250, name: "MAIL")
        _ = try await session.command("RCPT TO:<\(recipient)>", expect: 250, also: [251], name: "RCPT")
        _ = try await session.command("DATA", expect: 354, name: "DATA")
        try await session.send(SMTPMessage.dotStuffed(data) + "\r\n.\r\n")
        try await session.expect(250, after: "message")
        _ = try? await session.command("QUIT", expect: 221, name: "QUIT")
    }

    private func authenticate(
        _ session: inout SMTPSession, username: String, password: String, extensions: [String]
    ) async throws {
        let mechanisms = Set(
            extensions.filter { $0.uppercased().hasPrefix("AUTH ") }
                .flatMap { $0.uppercased().split(separator: " ").dropFirst().map(String.init) })
        if mechanisms.contains("PLAIN") {
            let token = Data("\u{0}\(username)\u{0}\(password)".utf8).base64EncodedString()
            _ = try await session.command("AUTH PLAIN \(token)", expect: 235, name: "AUTH PLAIN")
        } else if mechanisms.contains("LOGIN") {
            _ = try await session.command("AUTH LOGIN", expect: 334, name: "AUTH LOGIN")
            _ = try await session.command(
                Data(username.utf8).base64EncodedString(), expect: 334, name: "AUTH LOGIN username")
            _ = try await session.command(
                Data(password.utf8).base64EncodedString(), expect: 235, name: "AUTH LOGIN password")
        } else {
            throw DeliveryError("SMTP server offers neither AUTH PLAIN nor AUTH LOGIN")
        }
    }

    /// SNI and certificate name: a DNS name as given; none for an IP address (then the address is checked).
    static func sniName(_ host: String) -> String? {
        let isIP = host.contains(":") || host.split(separator: ".").allSatisfy { $0.allSatisfy(\.isNumber) }
        return isIP ? nil : host
    }

    /// The name this client gives in EHLO: the machine's host name when it is a dotted name,
    /// otherwise the loopback address literal (RFC 5321 §4.1.4 allows either).
    static let clientName: String = {
        let name = ProcessInfo.processInfo.hostName
        return name.contains(".") && name.allSatisfy({ $0.isASCII && !$0.isWhitespace }) ? name : "[127.0.0.1]"
    }()
}

/// Reads replies (`250-…` continuation lines, then `250 …`) and writes commands on one connection.
struct SMTPSession {
    var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var pending = ByteBuffer()

    init(
        inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    ) {
        self.inbound = inbound
        self.outbound = outbound
    }

    struct Reply {
        let code: Int
        /// The text of each line after the code (for EHLO, the extensions after the greeting line).
        let lines: [String]
    }

    mutating func send(_ text: String) async throws {
        try await outbound.write(ByteBuffer(string: text))
    }

    /// Sends `line` and checks the reply code; returns the reply's lines after the first. Errors
    /// name the command (`name`), never the line, which may carry credentials.
    mutating func command(_ line: String, expect code: Int, also: Set<Int> = [], name: String) async throws
        -> [String]
    {
        guard !SMTPMessage.hasLineBreak(line) else {
            throw DeliveryError("refusing to send an SMTP \(name) with a line break in it")
        }
        try await send(line + "\r\n")
        let reply = try await readReply()
        guard reply.code == code || also.contains(reply.code) else {
            throw DeliveryError("SMTP \(name) answered \(reply.code)")
        }
        return Array(reply.lines.dropFirst())
    }

    mutating func expect(_ code: Int, after what: String) async throws {
        let reply = try await readReply()
        guard reply.code == code else { throw DeliveryError("SMTP \(what) answered \(reply.code)") }
    }

    /// One whole reply. A line longer than 4 KiB or a malformed code is a protocol error.
    mutating func readReply() async throws -> Reply {
        var lines: [String] = []
        while true {
            let line = try await readLine()
            let bytes = Array(line.utf8)
            guard bytes.count >= 3, let code = Int(String(line.prefix(3))), (200...599).contains(code) else {
                throw DeliveryError("SMTP server sent a malformed reply")
            }
            lines.append(bytes.count > 4 ? String(line.dropFirst(4)) : "")
            if bytes.count == 3 || bytes[3] == UInt8(ascii: " ") { return Reply(code: code, lines: lines) }
            guard bytes[3] == UInt8(ascii: "-") else { throw DeliveryError("SMTP server sent a malformed reply") }
        }
    }

    private mutating func readLine() async throws -> String {
        while true {
            if let index = pending.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
                // Bytes, not Characters: "\r\n" is a single Character in Swift.
                var bytes = pending.readBytes(length: index - pending.readerIndex + 1) ?? []
                while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") {
                    bytes.removeLast()
                }
                return String(decoding: bytes, as: UTF8.self)
            }
            guard pending.readableBytes <= 4096 else { throw DeliveryError("SMTP server sent an overlong line") }
            guard var chunk = try await inbound.next() else {
                throw DeliveryError("SMTP server closed the connection")
            }
            pending.writeBuffer(&chunk)
        }
    }
}

/// An RFC 5322 message in plain text.
enum SMTPMessage {
    /// Headers and body with CRLF line ends. ASCII bodies go as 7bit; others as base64 UTF-8.
    static func render(from: String, to: String, subject: String, body: String, date: Date) throws -> String {
        for field in [from, to, subject] where hasLineBreak(field) {
            throw DeliveryError("refusing to send a header with a line break in it")
        }
        let domain = from.split(separator: "@").last.map(String.init) ?? "twofold.invalid"
        var headers = [
            "From: \(from)",
            "To: \(to)",
            "Subject: \(encodedWord(subject))",
            "Date: \(rfc5322Date(date))",
            "Message-ID: <\(UUID().uuidString.lowercased())@\(domain)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
        ]
        // Every line end becomes CRLF; no bare CR or LF reaches the server (RFC 5322 §2.3).
        let normalised = body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
            .replacingOccurrences(of: "\n", with: "\r\n")
        let text: String
        if normalised.allSatisfy(\.isASCII) {
            headers.append("Content-Transfer-Encoding: 7bit")
            text = normalised
        } else {
            headers.append("Content-Transfer-Encoding: base64")
            text = Data(normalised.utf8).base64EncodedString(options: [
                .lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed,
            ])
        }
        return headers.joined(separator: "\r\n") + "\r\n\r\n" + text
    }

    /// A CR or LF anywhere (checked on bytes: "\r\n" is one Character in Swift).
    static func hasLineBreak(_ text: String) -> Bool {
        text.utf8.contains { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }
    }

    /// RFC 5321 §4.5.2: a line starting with "." gets another in front.
    static func dotStuffed(_ data: String) -> String {
        data.components(separatedBy: "\r\n").map { $0.hasPrefix(".") ? "." + $0 : $0 }
            .joined(separator: "\r\n")
    }

    /// RFC 2047 for a non-ASCII subject.
    static func encodedWord(_ text: String) -> String {
        text.allSatisfy(\.isASCII) ? text : "=?utf-8?B?\(Data(text.utf8).base64EncodedString())?="
    }

    static func rfc5322Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }
}

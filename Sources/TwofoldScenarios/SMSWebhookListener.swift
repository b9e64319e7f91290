import Crypto
import Foundation
import TwofoldCore

/// Listens for the server's SMS webhook (`TWOFOLD_SMS_PROVIDER=webhook`): each request is a
/// `POST` of `{"to": "+1…", "message": "…"}` signed `X-Twofold-Signature: sha256=<hex HMAC-SHA256
/// of the body>` with the shared secret. Messages whose signature holds are kept and answered
/// 204; any other request is answered 401 or 400 and dropped. The connections are served by a
/// `LoopbackHTTPServer` (bounded sizes, one deadline, a thread each).
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
    public typealias Failure = LoopbackHTTPServer.Failure

    /// The port it listens on (the one asked for, or the one the system chose for 0).
    public var port: Int { server.port }
    /// The IPv4 address it listens on (`localhost` is `127.0.0.1`).
    public var host: String { server.host }
    // Safe: `server` is set once in `init`; `messages` and `refused` are read and written under
    // `lock` only (by the server's threads and the listener's readers).
    private var server: LoopbackHTTPServer!
    private let lock = NSLock()
    private var messages: [Message] = []
    private var refused = 0
    /// How long `code(to:sentBy:)` waits.
    public var wait: TimeInterval = 30

    /// Listens on `address` (`HOST:PORT`; port 0 lets the system choose) for webhooks signed
    /// with `secret`.
    public init(address: String, secret: String) throws {
        let key = SymmetricKey(data: Data(secret.utf8))
        server = try LoopbackHTTPServer(address: address, name: "sms-webhook") { [weak self] request in
            LoopbackHTTPServer.Response(status: self?.take(request, key: key) ?? 503)
        }
    }

    /// The webhook URL to give the server (`TWOFOLD_SMS_WEBHOOK_URL`).
    public var url: String { "http://\(host):\(port)/sms" }

    /// Every message kept so far, in the order they came.
    public var received: [Message] { lock.withLock { messages } }

    /// Requests answered 401 or 400 (a wrong signature, a malformed request).
    public var refusedCount: Int { lock.withLock { refused } }

    /// Stops listening.
    public func stop() { server.stop() }

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

    // MARK: Taking messages

    /// The status for one request: 204 kept, 401 unsigned or wrongly signed, 400 malformed.
    private func take(_ request: LoopbackHTTPServer.Request, key: SymmetricKey) -> Int {
        guard request.method == "POST" else { return refuse(400) }
        guard let signature = request.headers["x-twofold-signature"], signature.hasPrefix("sha256=") else {
            return refuse(401)
        }
        let expected = HMAC<SHA256>.authenticationCode(for: request.body, using: key)
            .map { String(format: "%02x", $0) }.joined()
        guard ConstantTime.equals(String(signature.dropFirst("sha256=".count)).lowercased(), expected) else {
            return refuse(401)
        }
        guard let message = try? JSONDecoder().decode(Message.self, from: request.body) else { return refuse(400) }
        lock.withLock { messages.append(message) }
        return 204
    }

    private func refuse(_ status: Int) -> Int {
        lock.withLock { refused += 1 }
        return status
    }
}

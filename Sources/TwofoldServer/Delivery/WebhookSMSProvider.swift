import Crypto
import Foundation
import TwofoldAPI
import Vapor

/// SMS through an HTTP webhook (`TWOFOLD_SMS_PROVIDER=webhook`): POSTs `{ "to": "+E164",
/// "message": "…" }` to `TWOFOLD_SMS_WEBHOOK_URL`, signed with `X-Twofold-Signature:
/// sha256=<hex HMAC-SHA256 of the body>` when `TWOFOLD_SMS_WEBHOOK_SECRET` is set. Any answer
/// other than 2xx is a failure to retry.
struct WebhookSMSProvider: MessageProvider {
    let name = "webhook"
    let url: URI
    let secret: String?
    let client: any Client

    struct Payload: Content {
        let to: String
        let message: String
    }

    func deliver(_ message: OutgoingMessage) async throws {
        let body = try Wire.encoder().encode(Payload(to: message.destination, message: message.body))
        var headers: HTTPHeaders = ["Content-Type": "application/json"]
        if let secret {
            headers.add(name: "X-Twofold-Signature", value: "sha256=" + Self.signature(of: body, secret: secret))
        }
        let response = try await client.post(url, headers: headers) { request in
            request.body = ByteBuffer(data: body)
        }
        guard (200..<300).contains(response.status.code) else {
            throw DeliveryError("webhook answered \(response.status.code)")
        }
    }

    /// Hex HMAC-SHA256 of the exact body bytes; the receiver recomputes it to authenticate us.
    static func signature(of body: Data, secret: String) -> String {
        HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8))).hexString
    }
}

import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import TwofoldCore

/// Apple Push Notification service over HTTP/2 with token authentication (`TWOFOLD_APNS_*`):
/// `POST /3/device/<token>` with a provider token (an ES256 JWT signed by the `.p8` key, `kid`
/// the key's ID, `iss` the team's, renewed every 40 minutes as Apple asks: not more often than
/// every 20, not older than 60) and the `apns-*` headers. Apple's answers: 200 sent; 410, or 400
/// `BadDeviceToken`, the token is gone; 403 `ExpiredProviderToken` renews the JWT and tries
/// again; 429 and 5xx wait and try again (three tries in all); anything else fails.
final class APNsDelivery: PhoneNotificationDelivery {
    let name = "apns"
    let settings: Configuration.APNsSettings
    private let key: P256.Signing.PrivateKey
    private let http: HTTPClient
    private let providerTokens: ProviderTokens

    init(settings: Configuration.APNsSettings, group: any EventLoopGroup) throws {
        self.settings = settings
        key = try P256.Signing.PrivateKey(
            pemRepresentation: String(
                decoding: try Data(contentsOf: URL(fileURLWithPath: settings.keyFile)), as: UTF8.self))
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile = settings.caFile { tls.additionalTrustRoots = [.file(caFile)] }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, timeout: .init(connect: .seconds(5), read: .seconds(10)))
        // HTTP/2 through ALPN (APNs speaks nothing else); one connection carries every push.
        configuration.httpVersion = .automatic
        configuration.redirectConfiguration = .disallow
        http = HTTPClient(eventLoopGroupProvider: .shared(group), configuration: configuration)
        providerTokens = ProviderTokens()
    }

    func shutdown() async {
        try? await http.shutdown()
    }

    func deliver(_ notification: PhoneNotification, to token: String) async throws -> PhoneNotificationOutcome {
        var renewed = false
        var renewNow = false
        var attempt = 0
        while true {
            attempt += 1
            let answer: (status: Int, reason: String?)
            do {
                // The provider token is made again once, right after Apple called it expired
                // (Apple refuses tokens renewed too often).
                answer = try await send(notification, to: token, renew: renewNow)
                renewNow = false
            } catch {
                // The connection failed (refused, reset, TLS): worth another try or two.
                guard attempt < Self.attempts else {
                    throw DeliveryError("APNs unreachable: \(String(reflecting: type(of: error)))")
                }
                try await Task.sleep(for: .seconds(attempt))
                continue
            }
            switch answer.status {
            case 200: return .delivered
            case 410: return .tokenGone
            case 400 where answer.reason == "BadDeviceToken" || answer.reason == "DeviceTokenNotForTopic":
                return .tokenGone
            case 403 where answer.reason == "ExpiredProviderToken" && !renewed:
                (renewed, renewNow) = (true, true)
            case let status where (status == 429 || status >= 500) && attempt < Self.attempts:
                try await Task.sleep(for: .seconds(attempt))
            default:
                throw DeliveryError("APNs answered \(answer.status) \(answer.reason ?? "")")
            }
        }
    }

    /// Tries in all, for a connection that fails or an answer that asks to wait.
    static let attempts = 3

    private func send(_ notification: PhoneNotification, to token: String, renew: Bool) async throws -> (
        status: Int, reason: String?
    ) {
        var request = HTTPClientRequest(url: settings.server + "/3/device/" + token)
        request.method = .POST
        let bearer = try await providerTokens.current(key: key, settings: settings, renew: renew)
        request.headers.add(name: "authorization", value: "bearer " + bearer)
        request.headers.add(name: "apns-topic", value: settings.topic)
        request.headers.add(name: "apns-push-type", value: "alert")
        request.headers.add(name: "apns-priority", value: "10")
        request.headers.add(name: "apns-collapse-id", value: notification.id)
        let expiration: Double = notification.expiresAt?.timeIntervalSince1970.rounded(.down) ?? 0
        request.headers.add(name: "apns-expiration", value: String(Int(expiration)))
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: try Self.payload(notification)))
        let response = try await http.execute(request, timeout: .seconds(15))
        let body = try await response.body.collect(upTo: 4096)
        let reason = try? JSONDecoder().decode(Reason.self, from: Data(buffer: body)).reason
        return (Int(response.status.code), reason)
    }

    private struct Reason: Decodable {
        let reason: String
    }

    /// The JSON Apple delivers: an alert in words, the category the app's notification actions
    /// hang on, and which request or notice to fetch.
    static func payload(_ notification: PhoneNotification) throws -> [UInt8] {
        struct Payload: Encodable {
            struct APS: Encodable {
                struct Alert: Encodable {
                    let title: String
                    let body: String
                }
                let alert: Alert
                let sound: String
                let category: String
                let interruptionLevel: String

                enum CodingKeys: String, CodingKey {
                    case alert, sound, category
                    case interruptionLevel = "interruption-level"
                }
            }
            let aps: APS
            let twofold: [String: String]
        }
        let isApproval: Bool = notification.kind == .approval
        let idName: String = isApproval ? "requestId" : "noticeId"
        let payload = Payload(
            aps: .init(
                alert: .init(title: notification.title, body: notification.body), sound: "default",
                category: isApproval ? "TWOFOLD_APPROVAL" : "TWOFOLD_NOTICE",
                interruptionLevel: isApproval ? "time-sensitive" : "active"),
            twofold: ["kind": notification.kind.rawValue, idName: notification.id])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Array(try encoder.encode(payload))
    }
}

/// The provider token, made once and kept 40 minutes (or renewed when Apple says it expired).
private actor ProviderTokens {
    private var token: (text: String, madeAt: Date)?

    func current(key: P256.Signing.PrivateKey, settings: Configuration.APNsSettings, renew: Bool) throws -> String {
        let now = Date()
        if !renew, let token, now.timeIntervalSince(token.madeAt) < 40 * 60 { return token.text }
        let text = try Self.make(key: key, keyID: settings.keyID, teamID: settings.teamID, at: now)
        token = (text, now)
        return text
    }

    /// `base64url(header).base64url(claims).base64url(r‖s)`: ES256 as JWS has it (RFC 7518 §3.4).
    static func make(key: P256.Signing.PrivateKey, keyID: String, teamID: String, at date: Date) throws -> String {
        struct Header: Encodable {
            let alg = "ES256"
            let kid: String
        }
        struct Claims: Encodable {
            let iss: String
            let iat: Int
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let header: Data = try encoder.encode(Header(kid: keyID))
        let claims: Data = try encoder.encode(Claims(iss: teamID, iat: Int(date.timeIntervalSince1970)))
        let signingInput: String = [Base64URL.encode(header), Base64URL.encode(claims)].joined(separator: ".")
        let signature: Data = try key.signature(for: Data(signingInput.utf8)).rawRepresentation
        return [signingInput, Base64URL.encode(signature)].joined(separator: ".")
    }
}

import Foundation
import TwofoldAPI

/// One message to hand to a provider.
struct OutgoingMessage: Sendable {
    let channel: DeliveryChannel
    /// E.164 number or email address.
    let destination: String
    let subject: String
    let body: String
}

/// Something that delivers a message or throws; `DeliveryWorker` retries on failure.
protocol MessageProvider: Sendable {
    /// A short name for logs (`console`, `webhook`, `smtp`).
    var name: String { get }
    func deliver(_ message: OutgoingMessage) async throws
}

/// Why a provider could not deliver; the text goes to `last_error` and the log, never the code.
struct DeliveryError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// How a code or notice reaches a person: a text message to a phone or an email.
enum DeliveryChannel: String, Codable, Sendable, CaseIterable {
    case sms, email

    /// The second factor that codes by this channel are.
    var method: FactorMethod { self == .sms ? .sms : .email }

    /// The channel of a method whose proof is a sent code.
    init?(_ method: FactorMethod) {
        switch method {
        case .sms: self = .sms
        case .email: self = .email
        default: return nil
        }
    }
}

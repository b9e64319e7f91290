import Foundation
import TwofoldCore

/// The client data a browser or app signs over (WebAuthn §5.8.1), read from `clientDataJSON`.
public struct ClientData: Sendable, Equatable {
    public let type: String
    /// The challenge's bytes, decoded from base64url.
    public let challenge: [UInt8]
    public let origin: String
    public let crossOrigin: Bool
    public let topOrigin: String?
    /// The bytes it was read from, which the authenticator signed the hash of.
    public let json: [UInt8]

    private struct Members: Decodable {
        let type: String
        let challenge: String
        let origin: String
        let crossOrigin: Bool?
        let topOrigin: String?
        let tokenBinding: TokenBinding?
    }

    /// Token binding (WebAuthn Level 2): an object whose `status` is `present` or `supported`.
    /// Early browsers wrote other forms (the string `"unused"`), which say nothing and pass.
    private struct TokenBinding: Decodable {
        let status: String?

        init(from decoder: any Decoder) throws {
            let container = try? decoder.container(keyedBy: CodingKeys.self)
            status = try container?.decodeIfPresent(String.self, forKey: .status)
        }

        enum CodingKeys: String, CodingKey { case status }
    }

    public init(json: [UInt8]) throws(WebAuthnError) {
        // A member written twice would be read one way here and perhaps another by whatever
        // else reads the signed bytes: refused.
        do {
            try JSONUniqueMembers.check(json)
        } catch .duplicate(let name) {
            throw Self.failure("it names the member \(name.debugDescription) twice")
        } catch {
            throw Self.failure("it is not a JSON object")
        }
        let members: Members
        do {
            members = try JSONDecoder().decode(Members.self, from: Data(json))
        } catch DecodingError.keyNotFound(let key, _) {
            throw Self.failure("it has no \(key.stringValue)")
        } catch DecodingError.typeMismatch(_, let context) {
            throw Self.failure(
                "its \(context.codingPath.map(\.stringValue).joined(separator: ".")) is of the wrong type")
        } catch {
            throw Self.failure("it is not a JSON object")
        }
        if let status = members.tokenBinding?.status, status != "present", status != "supported" {
            throw Self.failure("its tokenBinding.status \(status.debugDescription) is neither present nor supported")
        }
        guard let challenge = Base64URL.decode(members.challenge) else {
            throw Self.failure("its challenge is not base64url")
        }
        type = members.type
        self.challenge = challenge
        origin = members.origin
        crossOrigin = members.crossOrigin ?? false
        topOrigin = members.topOrigin
        self.json = json
    }

    private static func failure(_ message: String) -> WebAuthnError {
        WebAuthnError(.malformedClientData, "clientDataJSON is malformed: \(message)")
    }
}

import Crypto
import Foundation

/// What a phone signs to answer "Approve on your phone" (issue Z): the request as the phone
/// showed it, the number picked and the decision, in one byte string that the server rebuilds
/// from what it stored. The phone computes the digest from the fields it displayed, never from
/// a digest it was sent, so a signature covers what the person saw.
public enum PushApprovalMessage {
    /// The three answers a phone can give.
    public enum Decision: String, Sendable, CaseIterable, Codable {
        /// The number the screen shows was picked.
        case approve
        /// "Deny": this sign-in should not go on.
        case deny
        /// "This wasn't me": deny, and tell the owner someone has their password.
        case notMe
    }

    /// The fields of a request that the phone shows and the signature covers.
    public struct Shown: Sendable, Equatable {
        public var requestID: String
        public var choices: [Int]
        public var asking: String
        public var place: String
        /// Whole seconds since 1970, so both sides write the time the same way.
        public var createdAt: Int64
        public var expiresAt: Int64
        /// What approving does: `signIn` (a sign-in goes on) or `stepUp` (a signed-in session
        /// confirms it is its owner's).
        public var purpose: String

        public init(
            requestID: String, choices: [Int], asking: String, place: String, createdAt: Int64, expiresAt: Int64,
            purpose: String = "signIn"
        ) {
            (self.requestID, self.choices, self.asking, self.place) = (requestID, choices, asking, place)
            (self.createdAt, self.expiresAt, self.purpose) = (createdAt, expiresAt, purpose)
        }

        /// SHA-256 over the fields, each prefixed with its length (no field can run into the
        /// next), as unpadded base64url; a purpose other than `signIn` is a last field.
        public var digest: String {
            var bytes = Data("twofold-push-request-v1".utf8)
            var fields: [String] = [
                requestID, choices.map(String.init).joined(separator: ","), asking, place, String(createdAt),
                String(expiresAt),
            ]
            if purpose != "signIn" { fields.append(purpose) }
            for field in fields {
                let utf8 = Data(field.utf8)
                bytes.append(contentsOf: withUnsafeBytes(of: UInt32(utf8.count).bigEndian, Array.init))
                bytes.append(utf8)
            }
            return Base64URL.encode(Array(SHA256.hash(data: bytes)))
        }
    }

    /// The bytes the device key signs: the request, the number picked (none for a denial) and
    /// the decision, over the request's digest.
    public static func signed(requestID: String, number: Int?, decision: Decision, digest: String) -> Data {
        Data("twofold-push-v1\n\(requestID)\n\(number.map(String.init) ?? "-")\n\(decision.rawValue)\n\(digest)".utf8)
    }
}

import Crypto
import Foundation

@testable import WebAuthn

/// A software authenticator for tests: one P-256 credential, `none` attestation, payloads
/// built byte by byte so a test can break exactly one thing.
struct TestAuthenticator {
    let key = P256.Signing.PrivateKey()
    var credentialID: [UInt8] = Array(repeating: 0xc1, count: 32)
    var rpID = "example.org"
    var origin = "https://example.org"
    var flags: AuthenticatorData.Flags = [.userPresent, .userVerified]
    var signCount: UInt32 = 0

    var coseKey: CBOR {
        let raw = Array(key.publicKey.rawRepresentation)
        return .map([
            .init(.unsigned(1), .unsigned(2)), .init(.unsigned(3), .negative(6)), .init(.negative(0), .unsigned(1)),
            .init(.negative(1), .bytes(Array(raw.prefix(32)))), .init(.negative(2), .bytes(Array(raw.suffix(32)))),
        ])
    }

    func clientData(type: String, challenge: [UInt8], origin: String? = nil, extra: String = "") -> [UInt8] {
        Array(
            #"{"type":"\#(type)","challenge":"\#(Base64URL.encode(challenge))","origin":"\#(origin ?? self.origin)"\#(extra)}"#
                .utf8)
    }

    func authenticatorData(attested: Bool, rpID: String? = nil, key: CBOR? = nil) -> [UInt8] {
        var bytes = Array(SHA256.hash(data: Array((rpID ?? self.rpID).utf8)))
        bytes.append(flags.union(attested ? .attestedCredentialData : []).rawValue)
        bytes += (0..<4).reversed().map { UInt8(truncatingIfNeeded: signCount >> ($0 * 8)) }
        if attested {
            bytes += Array(repeating: 0xaa, count: 16)
            bytes += [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xff)] + credentialID
            bytes += CBOREncoder.encode(key ?? coseKey)
        }
        return bytes
    }

    func attestationObject(authenticatorData: [UInt8]) -> [UInt8] {
        CBOREncoder.encode(
            .map([
                .init(.text("fmt"), .text("none")), .init(.text("attStmt"), .map([])),
                .init(.text("authData"), .bytes(authenticatorData)),
            ]))
    }

    func sign(_ authenticatorData: [UInt8], _ clientData: [UInt8]) throws -> [UInt8] {
        Array(try key.signature(for: authenticatorData + Array(SHA256.hash(data: clientData))).derRepresentation)
    }
}

import Crypto
import Foundation
import TwofoldCore
import WebAuthn

/// A software authenticator for tests: one P-256 credential, `none` or `packed` self attestation,
/// payloads built byte by byte so a test can break exactly one thing.
public struct TestAuthenticator: Sendable {
    public let key: P256.Signing.PrivateKey
    public var credentialID: [UInt8]
    public var rpID: String
    public var origin: String
    public var flags: AuthenticatorData.Flags
    public var signCount: UInt32
    /// `none`, or `packed` (self attestation).
    public var format: String

    public init(
        rpID: String = "example.org", origin: String = "https://example.org",
        credentialID: [UInt8] = Array(repeating: 0xc1, count: 32),
        flags: AuthenticatorData.Flags = [.userPresent, .userVerified], signCount: UInt32 = 0, format: String = "none"
    ) {
        self.key = P256.Signing.PrivateKey()
        self.credentialID = credentialID
        self.rpID = rpID
        self.origin = origin
        self.flags = flags
        self.signCount = signCount
        self.format = format
    }

    public var coseKey: CBOR {
        let raw = Array(key.publicKey.rawRepresentation)
        return .map([
            .init(.unsigned(1), .unsigned(2)), .init(.unsigned(3), .negative(6)), .init(.negative(0), .unsigned(1)),
            .init(.negative(1), .bytes(Array(raw.prefix(32)))), .init(.negative(2), .bytes(Array(raw.suffix(32)))),
        ])
    }

    public func clientData(type: String, challenge: [UInt8], origin: String? = nil, extra: String = "") -> [UInt8] {
        Array(
            #"{"type":"\#(type)","challenge":"\#(Base64URL.encode(challenge))","origin":"\#(origin ?? self.origin)"\#(extra)}"#
                .utf8)
    }

    public func authenticatorData(attested: Bool, rpID: String? = nil, key: CBOR? = nil) -> [UInt8] {
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

    /// The attestation object for `authenticatorData`; `packed` signs it with `clientData`'s hash.
    public func attestationObject(authenticatorData: [UInt8], clientData: [UInt8] = []) -> [UInt8] {
        var statement = CBOR.map([])
        if format == "packed", let signature = try? sign(authenticatorData, clientData) {
            statement = .map([.init(.text("alg"), .negative(6)), .init(.text("sig"), .bytes(signature))])
        }
        return CBOREncoder.encode(
            .map([
                .init(.text("fmt"), .text(format)), .init(.text("attStmt"), statement),
                .init(.text("authData"), .bytes(authenticatorData)),
            ]))
    }

    public func sign(_ authenticatorData: [UInt8], _ clientData: [UInt8]) throws -> [UInt8] {
        Array(try key.signature(for: authenticatorData + Array(SHA256.hash(data: clientData))).derRepresentation)
    }
}

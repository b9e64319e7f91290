import Crypto
import Foundation
import TwofoldAPI
import TwofoldCore
import WebAuthn

/// One passkey held in software: a P-256 credential (ES256) for one relying party, with `none`
/// or `packed` self attestation, its signature counter and the user handle it was made for.
/// It writes its payloads byte by byte as an authenticator does (client data, authenticator
/// data, attestation object, DER signature over `authenticatorData ‖ SHA-256(clientDataJSON)`),
/// and each step is public so a test can break exactly one thing. `VirtualAuthenticator` holds
/// several and runs the ceremonies from a server's options.
public struct SoftwarePasskey: Sendable {
    /// The credential's P-256 private key.
    public let key: P256.Signing.PrivateKey
    /// The credential ID's bytes.
    public var credentialID: [UInt8]
    /// The relying party's ID, whose hash starts the authenticator data.
    public var rpID: String
    /// The page the ceremonies come from (`clientDataJSON.origin`).
    public var origin: String
    /// The authenticator data's flags (user present and verified, backup state).
    public var flags: AuthenticatorData.Flags
    /// The counter the next assertion writes is one more than this; `0` keeps it at zero (an
    /// authenticator without a counter, as synced passkeys are).
    public var signCount: UInt32
    /// `none`, or `packed` (self attestation). Any other name is written as is, unsigned.
    public var format: String
    /// The user handle (`user.id`) the credential was created for; sent back with assertions.
    public var userHandle: [UInt8]?
    /// The authenticator model's AAGUID (all zeros: no model named).
    public var aaguid: [UInt8]

    /// A passkey for `rpID` on pages of `origin`; a fixed credential ID and a new key unless given.
    public init(
        rpID: String = "example.org", origin: String = "https://example.org",
        credentialID: [UInt8] = Array(repeating: 0xc1, count: 32),
        flags: AuthenticatorData.Flags = [.userPresent, .userVerified], signCount: UInt32 = 0, format: String = "none",
        userHandle: [UInt8]? = nil, aaguid: [UInt8] = Array(repeating: 0, count: 16),
        key: P256.Signing.PrivateKey = P256.Signing.PrivateKey()
    ) {
        self.key = key
        self.credentialID = credentialID
        self.rpID = rpID
        self.origin = origin
        self.flags = flags
        self.signCount = signCount
        self.format = format
        self.userHandle = userHandle
        self.aaguid = aaguid
    }

    /// The credential ID as the JSON forms carry it (`id`, `rawId`).
    public var id: String { Base64URL.encode(credentialID) }

    /// The public key as a COSE_Key (EC2, ES256, P-256).
    public var coseKey: CBOR {
        let raw = Array(key.publicKey.rawRepresentation)
        return .map([
            .init(.unsigned(1), .unsigned(2)), .init(.unsigned(3), .negative(6)), .init(.negative(0), .unsigned(1)),
            .init(.negative(1), .bytes(Array(raw.prefix(32)))), .init(.negative(2), .bytes(Array(raw.suffix(32)))),
        ])
    }

    /// `clientDataJSON` as a browser writes it; `extra` is appended inside the object.
    public func clientData(type: String, challenge: [UInt8], origin: String? = nil, extra: String = "") -> [UInt8] {
        Array(
            #"{"type":"\#(type)","challenge":"\#(Base64URL.encode(challenge))","origin":"\#(origin ?? self.origin)"\#(extra)}"#
                .utf8)
    }

    /// Authenticator data: the RP ID's hash, the flags, the counter and, when `attested`, the
    /// credential (AAGUID, ID and `key`, this passkey's COSE key unless given).
    public func authenticatorData(attested: Bool, rpID: String? = nil, key: CBOR? = nil) -> [UInt8] {
        var bytes = Array(SHA256.hash(data: Array((rpID ?? self.rpID).utf8)))
        bytes.append(flags.union(attested ? .attestedCredentialData : []).rawValue)
        bytes += (0..<4).reversed().map { UInt8(truncatingIfNeeded: signCount >> ($0 * 8)) }
        if attested {
            bytes += aaguid
            bytes += [
                UInt8(truncatingIfNeeded: credentialID.count >> 8), UInt8(truncatingIfNeeded: credentialID.count),
            ]
            bytes += credentialID
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

    /// The DER ECDSA signature over `authenticatorData ‖ SHA-256(clientData)`.
    public func sign(_ authenticatorData: [UInt8], _ clientData: [UInt8]) throws -> [UInt8] {
        Array(try key.signature(for: authenticatorData + Array(SHA256.hash(data: clientData))).derRepresentation)
    }

    /// What `navigator.credentials.create()` answers for `options` (this passkey's ID and key,
    /// whatever the options say; `VirtualAuthenticator` checks them). `change` may break the
    /// client data or the attestation object after they are made; `key` replaces the COSE key.
    public func registration(
        _ options: PasskeyCreationOptions, key: CBOR? = nil, transports: [String] = ["internal", "hybrid"],
        change: (inout [UInt8], inout [UInt8]) -> Void = { _, _ in }
    ) -> RegistrationCredential {
        var clientData = clientData(type: "webauthn.create", challenge: Base64URL.decode(options.challenge) ?? [])
        let data = authenticatorData(attested: true, key: key)
        var attestation = attestationObject(authenticatorData: data, clientData: clientData)
        change(&clientData, &attestation)
        return RegistrationCredential(
            id: id,
            response: .init(
                clientDataJSON: Base64URL.encode(clientData), attestationObject: Base64URL.encode(attestation),
                transports: transports), authenticatorAttachment: "platform")
    }

    /// What `navigator.credentials.get()` answers for `challenge` (base64url, as the options
    /// carry it). The counter moves first (by one, unless it is zero). `userHandle` is sent when
    /// given, else this passkey's own. `change` may break the client data, authenticator data
    /// or signature after signing.
    public mutating func assertion(
        _ challenge: String, userHandle: [UInt8]? = nil, type: String = "webauthn.get", origin: String? = nil,
        rpID: String? = nil, change: (inout [UInt8], inout [UInt8], inout [UInt8]) -> Void = { _, _, _ in }
    ) throws -> AuthenticationCredential {
        if signCount != 0 { signCount &+= 1 }
        var clientData = clientData(type: type, challenge: Base64URL.decode(challenge) ?? [], origin: origin)
        var data = authenticatorData(attested: false, rpID: rpID)
        var signature = try sign(data, clientData)
        change(&clientData, &data, &signature)
        return AuthenticationCredential(
            id: id,
            response: .init(
                clientDataJSON: Base64URL.encode(clientData), authenticatorData: Base64URL.encode(data),
                signature: Base64URL.encode(signature),
                userHandle: (userHandle ?? self.userHandle).map { Base64URL.encode($0) }))
    }
}

import Crypto
import Foundation
import TwofoldCore
import X509

/// A WebAuthn relying party: the ceremonies of WebAuthn Level 3 §7.1 (registering a new
/// credential) and §7.2 (verifying an authentication assertion), for one RP ID and its
/// accepted origins.
public struct RelyingParty: Sendable {
    /// Whether user verification is needed.
    public enum UserVerification: String, Sendable, CaseIterable {
        case required, preferred, discouraged
    }

    public let id: String
    /// Accepted values of the client data's `origin`: web origins (`https://example.org`) and
    /// native app origins (`android:apk-key-hash:…`).
    public let origins: [String]
    /// Top-level origins under which a cross-origin iframe may run a ceremony. Empty: every
    /// cross-origin ceremony is refused.
    public let topOrigins: [String]
    public let userVerification: UserVerification
    /// Roots attestation certificate chains must end at.
    public let attestationRoots: [Certificate]
    /// Refuse a registration whose attestation is not `verified`.
    public let requireAttestation: Bool
    /// The algorithms a new credential may use.
    public let algorithms: [COSEAlgorithm]
    /// The time certificates are checked at (injectable for tests and recorded ceremonies).
    public let clock: @Sendable () -> Date

    public init(
        id: String, origins: [String], topOrigins: [String] = [], userVerification: UserVerification = .preferred,
        attestationRoots: [Certificate] = [], requireAttestation: Bool = false,
        algorithms: [COSEAlgorithm] = COSEAlgorithm.credentialAlgorithms,
        clock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.id = id
        self.origins = origins
        self.topOrigins = topOrigins
        self.userVerification = userVerification
        self.attestationRoots = attestationRoots
        self.requireAttestation = requireAttestation
        self.algorithms = algorithms
        self.clock = clock
    }

    /// A credential this relying party registered: what it keeps to verify later assertions.
    public struct Credential: Sendable {
        public let id: [UInt8]
        /// The COSE key bytes.
        public let publicKey: [UInt8]
        public let algorithm: COSEAlgorithm
        public let signCount: UInt32
        public let aaguid: [UInt8]
        public let backupEligible: Bool
        public let backedUp: Bool
        public let userVerified: Bool
        public let attestation: AttestationResult

        /// The AAGUID as a lowercase UUID string (all zeros when the authenticator does not say).
        public var aaguidText: String {
            guard aaguid.count == 16 else { return "00000000-0000-0000-0000-000000000000" }
            let hex = aaguid.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
            return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
                String(hex.dropFirst(range.lowerBound).prefix(range.count))
            }.joined(separator: "-")
        }

        /// §7.1 step 5 with `rawId`: the credential a client reports (`id`, and `rawId` when it
        /// sends one, base64url as `PublicKeyCredential.toJSON()` writes them) is the one its
        /// authenticator attested. The one check the server and the command-line tool both make.
        public func check(reportedID id: String, rawID: String?) throws(WebAuthnError) {
            for (name, text) in [("id", id), ("rawId", rawID)] {
                guard let text else { continue }
                guard Base64URL.decode(text) == self.id else {
                    throw WebAuthnError(
                        .credentialIDMismatch,
                        "the credential's \(name) is not the credential ID its authenticator attested")
                }
            }
        }
    }

    /// §7.1: checks a registration's `clientDataJSON` and `attestationObject` against the
    /// `challenge` this server issued. `requireUserPresence: false` waives UP for one call
    /// (a browser's automatic passkey upgrade).
    public func verifyRegistration(
        clientDataJSON: [UInt8], attestationObject: [UInt8], challenge: [UInt8], requireUserPresence: Bool = true
    ) async throws(WebAuthnError) -> Credential {
        try await verifyRegistration(
            clientData: try ClientData(json: clientDataJSON), attestationObject: attestationObject,
            challenge: challenge, requireUserPresence: requireUserPresence)
    }

    /// `verifyRegistration` on client data a caller has read already (to find its challenge).
    public func verifyRegistration(
        clientData: ClientData, attestationObject: [UInt8], challenge: [UInt8], requireUserPresence: Bool = true
    ) async throws(WebAuthnError) -> Credential {
        try checkClientData(clientData, type: "webauthn.create", challenge: challenge)
        let object = try AttestationObject(attestationObject)
        let data = object.authenticatorData
        try checkAuthenticatorData(data, requireUserPresence: requireUserPresence)
        let credential = object.credential
        guard algorithms.contains(credential.publicKey.algorithm) else {
            throw WebAuthnError(
                .algorithmNotAllowed,
                "the credential's algorithm \(credential.publicKey.algorithm.name) is not one this server allows")
        }
        let attestation = try await AttestationVerifier.verify(
            object, clientDataHash: Array(SHA256.hash(data: clientData.json)), roots: attestationRoots, time: clock())
        if requireAttestation, attestation.trust != .verified {
            throw WebAuthnError(
                .attestationUntrusted,
                "the \(attestation.format) attestation could not be verified against this server's roots"
                    + (attestation.note.map { ": \($0)" } ?? ""))
        }
        return Credential(
            id: credential.credentialID, publicKey: credential.publicKeyBytes,
            algorithm: credential.publicKey.algorithm,
            signCount: data.signCount, aaguid: credential.aaguid, backupEligible: data.flags.contains(.backupEligible),
            backedUp: data.flags.contains(.backedUp), userVerified: data.flags.contains(.userVerified),
            attestation: attestation)
    }

    /// What a verified assertion showed.
    public struct Assertion: Sendable, Equatable {
        public let signCount: UInt32
        public let userVerified: Bool
        public let backupEligible: Bool
        public let backedUp: Bool
        /// BE or BS differs from what was stored: not a failure (iCloud Keychain changes them),
        /// to be recorded and audited.
        public let backupStateChanged: Bool
    }

    /// The stored state of a credential an assertion names.
    public struct StoredCredential: Sendable {
        public let publicKey: [UInt8]
        public let signCount: UInt32
        public let backupEligible: Bool
        public let backedUp: Bool

        public init(publicKey: [UInt8], signCount: UInt32, backupEligible: Bool, backedUp: Bool) {
            self.publicKey = publicKey
            self.signCount = signCount
            self.backupEligible = backupEligible
            self.backedUp = backedUp
        }
    }

    /// §7.2: checks an assertion made with `credential` against the `challenge` this server
    /// issued. A counter that does not grow (unless both are zero) is refused with
    /// `counterRegression`, for the caller to audit as a possible clone.
    public func verifyAssertion(
        clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], challenge: [UInt8],
        credential: StoredCredential
    ) throws(WebAuthnError) -> Assertion {
        try verifyAssertion(
            clientData: try ClientData(json: clientDataJSON), authenticatorData: authenticatorData,
            signature: signature, challenge: challenge, credential: credential)
    }

    /// `verifyAssertion` on client data a caller has read already (to find its challenge).
    public func verifyAssertion(
        clientData: ClientData, authenticatorData: [UInt8], signature: [UInt8], challenge: [UInt8],
        credential: StoredCredential
    ) throws(WebAuthnError) -> Assertion {
        try checkClientData(clientData, type: "webauthn.get", challenge: challenge)
        let data = try AuthenticatorData(authenticatorData)
        try checkAuthenticatorData(data, requireUserPresence: true)
        let key = try COSEKey(bytes: credential.publicKey)
        guard key.isValidSignature(signature, for: authenticatorData + Array(SHA256.hash(data: clientData.json))) else {
            throw WebAuthnError(.badSignature, "the assertion's signature does not verify with the credential's key")
        }
        if data.signCount != 0 || credential.signCount != 0, data.signCount <= credential.signCount {
            throw WebAuthnError(
                .counterRegression,
                "the signature counter went from \(credential.signCount) to \(data.signCount): the authenticator may have been cloned"
            )
        }
        let eligible = data.flags.contains(.backupEligible)
        let backedUp = data.flags.contains(.backedUp)
        return Assertion(
            signCount: data.signCount, userVerified: data.flags.contains(.userVerified), backupEligible: eligible,
            backedUp: backedUp,
            backupStateChanged: eligible != credential.backupEligible || backedUp != credential.backedUp)
    }

    /// §7.1 steps 7–10 and §7.2 steps 10–13: type, challenge, origin, cross-origin policy.
    private func checkClientData(_ client: ClientData, type: String, challenge: [UInt8]) throws(WebAuthnError) {
        guard client.type == type else {
            throw WebAuthnError(.wrongType, "the client data's type is \(client.type), not \(type)")
        }
        guard ConstantTime.equals(client.challenge, challenge) else {
            throw WebAuthnError(.challengeMismatch, "the client data's challenge is not the one this server issued")
        }
        guard origins.contains(client.origin) else {
            throw WebAuthnError(.originNotAllowed, "the origin \(client.origin) is not one of this server's origins")
        }
        // A cross-origin ceremony (an iframe) is allowed only when top origins are configured,
        // and a top origin the client names must be one of them. Browsers before Level 3 send
        // `crossOrigin` without `topOrigin`.
        if client.crossOrigin, topOrigins.isEmpty {
            throw WebAuthnError(.crossOriginNotAllowed, "this server does not allow cross-origin ceremonies")
        }
        if let top = client.topOrigin, top != client.origin, !topOrigins.contains(top) {
            throw WebAuthnError(.crossOriginNotAllowed, "the top origin \(top) is not one of this server's top origins")
        }
    }

    /// RP ID hash, UP, UV, and BS only with BE.
    private func checkAuthenticatorData(_ data: AuthenticatorData, requireUserPresence: Bool) throws(WebAuthnError) {
        guard data.rpIDHash == Array(SHA256.hash(data: Array(id.utf8))) else {
            throw WebAuthnError(.rpIDMismatch, "the authenticator data is not for the RP ID \(id)")
        }
        if requireUserPresence, !data.flags.contains(.userPresent) {
            throw WebAuthnError(.userNotPresent, "the authenticator did not test for user presence (UP is clear)")
        }
        if userVerification == .required, !data.flags.contains(.userVerified) {
            throw WebAuthnError(.userNotVerified, "the authenticator did not verify the user (UV is clear)")
        }
        if data.flags.contains(.backedUp), !data.flags.contains(.backupEligible) {
            throw WebAuthnError(
                .backupStateInvalid, "the credential claims to be backed up (BS) but not backup eligible (BE)")
        }
    }
}

/// Why a WebAuthn ceremony or one of its parts was refused: a stable `reason` a program can
/// branch on, and a sentence a person can act on ("the origin https://evil.test is not one of
/// this server's origins").
public struct WebAuthnError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: String, Sendable, CaseIterable {
        /// The bytes are not the CBOR WebAuthn carries (truncated, too deep, trailing bytes…).
        case malformedCBOR = "malformed_cbor"
        /// `clientDataJSON` is not the JSON object a browser writes.
        case malformedClientData = "malformed_client_data"
        /// The authenticator data is too short, too long or inconsistent with its flags.
        case malformedAuthenticatorData = "malformed_authenticator_data"
        /// The attestation object lacks a member or holds one of the wrong kind.
        case malformedAttestation = "malformed_attestation"
        /// A COSE key is malformed or of an algorithm this server does not accept.
        case unsupportedKey = "unsupported_key"
        case wrongType = "wrong_type"
        case challengeMismatch = "challenge_mismatch"
        case originNotAllowed = "origin_not_allowed"
        case crossOriginNotAllowed = "cross_origin_not_allowed"
        case rpIDMismatch = "rp_id_mismatch"
        case userNotPresent = "user_not_present"
        case userNotVerified = "user_not_verified"
        /// BS (backed up) set while BE (backup eligible) is clear.
        case backupStateInvalid = "backup_state_invalid"
        case algorithmNotAllowed = "algorithm_not_allowed"
        case credentialIDTooLong = "credential_id_too_long"
        /// The credential the client reports (`id`, `rawId`) is not the one its authenticator attested.
        case credentialIDMismatch = "credential_id_mismatch"
        case badSignature = "bad_signature"
        /// The signature counter did not grow: the authenticator may have been cloned.
        case counterRegression = "counter_regression"
        case unsupportedAttestationFormat = "unsupported_attestation_format"
        /// The attestation statement contradicts the credential it came with.
        case attestationInvalid = "attestation_invalid"
        /// The attestation could not be chained to a configured root while attestation is required.
        case attestationUntrusted = "attestation_untrusted"
    }

    public let reason: Reason
    public let message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { message }
}

import Foundation
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import WebAuthn

/// A platform authenticator in software with a browser's checks in front of it, on one page
/// (`origin`): it answers a server's creation and request options as
/// `navigator.credentials.create()` and `.get()` would, with real ES256 registrations (`none`
/// or `packed` self attestation) and assertions, and keeps its passkeys (discoverable, each
/// with the user handle it was made for) between ceremonies. For tests, and for the CLI and
/// the SDK's virtual phone, where no browser or Secure Enclave is at hand.
///
/// What it refuses, as a browser and authenticator do (`Refusal`): an RP ID the page's origin
/// may not use, options without ES256, a registration for an account it already holds a
/// passkey of (`excludeCredentials`), user verification it cannot give, and a request none of
/// its passkeys answers.
public struct VirtualAuthenticator: Sendable {
    /// Why a ceremony did not happen, with the DOMException a browser raises for it.
    public enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        /// `SecurityError`: the page's origin may not use this RP ID.
        case rpIDNotAllowed(rpID: String, origin: String)
        /// `NotSupportedError`: no algorithm in the options that the authenticator has (ES256).
        case noSupportedAlgorithm
        /// `InvalidStateError`: one of `excludeCredentials` is already here.
        case alreadyRegistered
        /// `NotAllowedError`: the options require user verification and this authenticator has none.
        case userVerificationUnavailable
        /// `NotAllowedError`: no passkey here answers the request.
        case noCredential
        /// `TypeError`: the options cannot be read (a challenge or user handle not base64url).
        case malformedOptions(String)

        /// The refusal, in words.
        public var description: String {
            switch self {
            case .rpIDNotAllowed(let rpID, let origin): "the page at \(origin) may not use the RP ID \(rpID)"
            case .noSupportedAlgorithm: "the options offer no algorithm this authenticator has (ES256)"
            case .alreadyRegistered: "this authenticator already holds a passkey for this account"
            case .userVerificationUnavailable: "the options require user verification, which this authenticator lacks"
            case .noCredential: "no passkey here answers this request"
            case .malformedOptions(let what): "the options cannot be read: \(what)"
            }
        }
    }

    /// The page the ceremonies come from.
    public var origin: String
    /// Whether it can verify the user (biometrics or a device PIN); without, it proves presence only.
    public var verifiesUser: Bool
    /// Passkeys that sync (backup eligible and backed up, no signature counter), as iCloud
    /// Keychain's; otherwise device-bound, with a counter.
    public var synced: Bool
    /// The attestation format of new passkeys: `none` or `packed`.
    public var format: String
    /// The passkeys it holds, oldest first.
    public private(set) var passkeys: [SoftwarePasskey] = []

    /// An authenticator for the pages of `origin`, holding `passkeys` (those a `PhoneFolder`
    /// kept, say).
    public init(
        origin: String, verifiesUser: Bool = true, synced: Bool = false, format: String = "none",
        passkeys: [SoftwarePasskey] = []
    ) {
        self.origin = origin
        self.verifiesUser = verifiesUser
        self.synced = synced
        self.format = format
        self.passkeys = passkeys
    }

    /// COSE's ES256, the one algorithm it makes keys for.
    static let es256 = -7

    /// Makes a passkey for `options` and answers as `navigator.credentials.create()`. A passkey
    /// it already holds for the same RP ID and user handle is replaced, as a discoverable
    /// credential is.
    public mutating func create(_ options: PasskeyCreationOptions) throws(Refusal) -> RegistrationCredential {
        try allow(rpID: options.rp.id)
        guard options.pubKeyCredParams.contains(where: { $0.type == "public-key" && $0.alg == Self.es256 }) else {
            throw .noSupportedAlgorithm
        }
        let excluded = Set(options.excludeCredentials.map(\.id))
        if passkeys.contains(where: { $0.rpID == options.rp.id && excluded.contains($0.id) }) {
            throw .alreadyRegistered
        }
        let requirement = options.authenticatorSelection.userVerification
        if requirement == "required", !verifiesUser { throw .userVerificationUnavailable }
        guard let userHandle = Base64URL.decode(options.user.id), !userHandle.isEmpty else {
            throw .malformedOptions("user.id is not base64url")
        }
        guard Base64URL.decode(options.challenge) != nil else { throw .malformedOptions("challenge is not base64url") }
        var credentialID = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in credentialID.indices { credentialID[index] = generator.next() }
        let passkey = SoftwarePasskey(
            rpID: options.rp.id, origin: origin, credentialID: credentialID,
            flags: flags(for: requirement).union(synced ? [.backupEligible, .backedUp] : []),
            signCount: synced ? 0 : 1, format: format, userHandle: userHandle)
        passkeys.removeAll { $0.rpID == options.rp.id && $0.userHandle == userHandle }
        passkeys.append(passkey)
        return passkey.registration(options, transports: synced ? ["hybrid", "internal"] : ["internal"])
    }

    /// Signs `options`' challenge with a passkey that answers it and answers as
    /// `navigator.credentials.get()`: one of `allowCredentials` when the options name some, else
    /// any of the RP ID's (a passwordless sign-in); `credentialID` picks one, else the newest.
    /// A device-bound passkey's counter moves by one.
    public mutating func get(_ options: PasskeyRequestOptions, credentialID: String? = nil) throws(Refusal)
        -> AuthenticationCredential
    {
        try allow(rpID: options.rpId)
        if options.userVerification == "required", !verifiesUser { throw .userVerificationUnavailable }
        guard Base64URL.decode(options.challenge) != nil else { throw .malformedOptions("challenge is not base64url") }
        let allowed = Set(options.allowCredentials.map(\.id))
        guard
            let index = passkeys.indices.last(where: { index in
                let passkey = passkeys[index]
                return passkey.rpID == options.rpId && (allowed.isEmpty || allowed.contains(passkey.id))
                    && (credentialID == nil || credentialID == passkey.id)
            })
        else { throw .noCredential }
        let synced = passkeys[index].flags.intersection([.backupEligible, .backedUp])
        passkeys[index].flags = flags(for: options.userVerification).union(synced)
        do {
            return try passkeys[index].assertion(options.challenge)
        } catch {
            // P-256 signing does not fail with a key that exists.
            throw .malformedOptions("the challenge could not be signed: \(error)")
        }
    }

    /// Forgets a passkey (as deleting it from the device does); whether it was here.
    @discardableResult
    public mutating func remove(credentialID: String) -> Bool {
        let before = passkeys.count
        passkeys.removeAll { $0.id == credentialID }
        return passkeys.count < before
    }

    /// The flags a ceremony sets: presence always; verification when the authenticator can
    /// and the relying party did not discourage it.
    private func flags(for userVerification: String) -> AuthenticatorData.Flags {
        verifiesUser && userVerification != "discouraged" ? [.userPresent, .userVerified] : [.userPresent]
    }

    /// A browser lets a page use its own host as RP ID, or a parent domain of it.
    private func allow(rpID: String) throws(Refusal) {
        guard let host = URLComponents(string: origin)?.host?.lowercased(), !rpID.isEmpty,
            host == rpID.lowercased() || host.hasSuffix("." + rpID.lowercased())
        else { throw .rpIDNotAllowed(rpID: rpID, origin: origin) }
    }
}

/// A `VirtualAuthenticator` as the SDK's `PasskeyCreating` and `PasskeyAsserting`: the passkeys
/// it makes stay in it, for the next ceremony and for a `PhoneFolder` to keep.
public actor VirtualPasskeys: PasskeyCreating, PasskeyAsserting {
    /// The authenticator, with the passkeys it holds.
    public private(set) var authenticator: VirtualAuthenticator
    /// The person declines every prompt (`PasskeyCancelled`) while this is set.
    public private(set) var cancels = false

    /// Ceremonies run on `authenticator`.
    public init(_ authenticator: VirtualAuthenticator) { self.authenticator = authenticator }

    /// Makes the person decline every prompt (`true`) or accept them again (`false`).
    public func setCancels(_ cancels: Bool) { self.cancels = cancels }

    /// A new passkey's registration for `options`; throws `PasskeyCancelled` while `cancels` is set, or the
    /// authenticator's `Refusal`.
    public func registration(for options: PasskeyCreationOptions) throws -> RegistrationCredential {
        if cancels { throw PasskeyCancelled() }
        return try authenticator.create(options)
    }

    /// An assertion for `options`; throws `PasskeyCancelled` while `cancels` is set, or the authenticator's
    /// `Refusal`.
    public func assertion(for options: PasskeyRequestOptions) throws -> AuthenticationCredential {
        if cancels { throw PasskeyCancelled() }
        return try authenticator.get(options)
    }

    /// Forgets a passkey; whether it was here.
    @discardableResult
    public func remove(credentialID: String) -> Bool { authenticator.remove(credentialID: credentialID) }
}

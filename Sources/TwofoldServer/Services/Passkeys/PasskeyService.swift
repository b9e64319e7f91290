import Foundation
import TwofoldAPI
import TwofoldCore
import WebAuthn

/// Passkeys (seed 000, API.md "Passkeys"): the options a browser needs, and the ceremonies that
/// register a passkey and sign in with one, on the `WebAuthn` module's relying party.
///
/// Every ceremony finds its challenge by the one the client signed (`clientDataJSON`), checks
/// that it was issued for this purpose, account and login flow, verifies the response, and only
/// then uses the challenge up with one conditional update: of many parallel copies of one
/// response, exactly one registers or signs in, and a refused response changes nothing. A
/// passkey cannot be guessed at, so refusals spend no attempt of the factor guard.
struct PasskeyService: Sendable {
    let store: any PasskeyStore
    let audit: Auditor
    let clock: ServerClock
    let settings: WebAuthnSettings
    /// Where ceremonies are verified: off the event loops (`ThreadPoolExecutor`); `nil` runs
    /// them where the request runs (tests without a pool).
    let ceremonies: (any TaskExecutor)?
    /// Registration, second step and step-up: user verification as configured.
    let relyingParty: RelyingParty
    /// Passwordless sign-in: the passkey is the whole sign-in, so the user must be verified.
    let passwordless: RelyingParty

    /// Bounds how many challenges one user asks for; `nil` in tests that do not count them.
    let challenges: ChallengeThrottle?

    init(
        store: any PasskeyStore, audit: Auditor, clock: ServerClock, settings: WebAuthnSettings,
        ceremonies: (any TaskExecutor)? = nil, challenges: ChallengeThrottle? = nil
    ) {
        self.ceremonies = ceremonies
        self.challenges = challenges
        self.store = store
        self.audit = audit
        self.clock = clock
        self.settings = settings
        relyingParty = settings.relyingParty(clock: clock.now)
        var strict = settings
        strict.userVerification = .required
        passwordless = strict.relyingParty(clock: clock.now)
    }

    /// The user handle of an account's passkeys: the 16 bytes of its ID, nothing personal.
    static func userHandle(_ userID: UUID) -> [UInt8] {
        withUnsafeBytes(of: userID.uuid) { Array($0) }
    }

    /// A credential id from a path: 1 to 1,400 characters, canonical; `404` otherwise.
    static func credentialID(_ text: String?) throws -> String {
        guard let text, !text.isEmpty, text.count <= 1400 else { throw notFound }
        return canonicalID(text)
    }

    /// A credential ID as this server writes it (canonical unpadded base64url), for comparing IDs
    /// a client spelled; `text` itself when it is not base64url.
    static func canonicalID(_ text: String) -> String {
        Base64URL.decode(text).map(Base64URL.encode) ?? text
    }

    /// The values `hints` may hold (WebAuthn Level 3 §5.8.7).
    static let hintValues: Set<String> = ["security-key", "client-device", "hybrid"]

    // MARK: Options

    /// `PublicKeyCredentialCreationOptionsJSON` for registering a passkey for `user`.
    func creationOptions(for user: User, hints: [String]?) async throws -> PasskeyCreationOptions {
        if let hints, hints.count > 3 || !hints.allSatisfy(Self.hintValues.contains) {
            throw InputValidation.failure(["hints": "may hold security-key, client-device and hybrid"])
        }
        let existing = try await store.credentials(userID: user.id)
        let challenge = try await newChallenge(.registration, userID: user.id, flowID: nil)
        return PasskeyCreationOptions(
            rp: .init(id: settings.rpID, name: settings.rpName),
            user: .init(
                id: Base64URL.encode(Self.userHandle(user.id)), name: user.email, displayName: user.username),
            challenge: challenge, pubKeyCredParams: relyingParty.algorithms.map { .init(alg: Int($0.rawValue)) },
            timeout: timeoutMilliseconds, excludeCredentials: existing.map(Self.descriptor),
            authenticatorSelection: .init(userVerification: settings.userVerification.rawValue),
            attestation: settings.attestation.rawValue, hints: hints)
    }

    /// `PublicKeyCredentialRequestOptionsJSON` for the second step of the login flow `flowID`
    /// (`purpose: .loginFlow`) or a step-up (`.stepUp`) of `userID`, naming their passkeys; or,
    /// with `.signIn` and no user, for a passwordless sign-in, naming none.
    func requestOptions(_ purpose: PasskeyChallengeRecord.Purpose, userID: UUID?, flowID: UUID?) async throws
        -> PasskeyRequestOptions
    {
        var allowed: [PasskeyDescriptor] = []
        if let userID {
            allowed = try await store.credentials(userID: userID).map(Self.descriptor)
            guard !allowed.isEmpty else { throw Self.noPasskey }
        }
        let challenge = try await newChallenge(purpose, userID: userID, flowID: flowID)
        return PasskeyRequestOptions(
            challenge: challenge, timeout: timeoutMilliseconds, rpId: settings.rpID, allowCredentials: allowed,
            userVerification: (purpose == .signIn ? passwordless : relyingParty).userVerification.rawValue)
    }

    private var timeoutMilliseconds: Int { Int(settings.challengeLifetime * 1000) }

    private static func descriptor(_ record: PasskeyRecord) -> PasskeyDescriptor {
        PasskeyDescriptor(id: record.credentialID, transports: record.transports.isEmpty ? nil : record.transports)
    }

    /// 32 random bytes, stored for one use within the challenge lifetime.
    private func newChallenge(_ purpose: PasskeyChallengeRecord.Purpose, userID: UUID?, flowID: UUID?) async throws
        -> String
    {
        if let userID { try await challenges?.require(userID: userID) }
        let now = clock.now()
        let challenge = Base64URL.encode(SecureRandom.bytes(32))
        try await store.insertChallenge(
            PasskeyChallengeRecord(
                id: SecureRandom.timeOrderedUUID(at: now), challenge: challenge, purpose: purpose, userID: userID,
                flowID: flowID, createdAt: now, expiresAt: now.addingTimeInterval(settings.challengeLifetime),
                usedAt: nil))
        return challenge
    }

    // MARK: Registration

    /// §7.1 for `user`: verifies the browser's answer to the options from `creationOptions` and
    /// stores the passkey. `name` is checked before anything else; without one the passkey is
    /// named after its provider, or "Passkey". `requireUserPresence: false` is a browser's
    /// automatic passkey upgrade, made without asking the user. The passkey is written only while
    /// `addedBy` (the session adding it) is live.
    func register(
        _ credential: RegistrationCredential, name: String?, requireUserPresence: Bool = true, user: User,
        origin: RequestOrigin, addedBy: AddingSession?
    ) async throws -> PasskeyRecord {
        let name = try name.map(Self.validName)
        try Self.checkType(credential.type)
        let clientDataJSON = try Self.bytes(credential.response.clientDataJSON, "credential.response.clientDataJSON")
        let attestationObject = try Self.bytes(
            credential.response.attestationObject, "credential.response.attestationObject")
        let (challenge, client) = try await issuedChallenge(
            clientDataJSON, purpose: .registration, userID: user.id, flowID: nil)
        let verified: RelyingParty.Credential
        let relyingParty = self.relyingParty
        do {
            verified = try await withTaskExecutorPreference(ceremonies) {
                try await relyingParty.verifyRegistration(
                    clientData: client, attestationObject: attestationObject, challenge: client.challenge,
                    requireUserPresence: requireUserPresence)
            }
        } catch let error as WebAuthnError {
            throw Self.problem(error)
        }
        let credentialID = Base64URL.encode(verified.id)
        do { try verified.check(reportedID: credential.id, rawID: credential.rawId) } catch {
            throw Self.problem(error)
        }
        guard try await store.credential(id: credentialID) == nil else { throw Self.alreadyRegistered }
        let now = try await claim(challenge)
        let aaguid = verified.aaguidText
        let record = PasskeyRecord(
            id: SecureRandom.timeOrderedUUID(at: now), userID: user.id, credentialID: credentialID,
            name: name ?? PasskeyProviders.name(aaguid: aaguid) ?? "Passkey",
            publicKey: Base64URL.encode(verified.publicKey), algorithm: Int(verified.algorithm.rawValue),
            signCount: Int(verified.signCount), aaguid: aaguid, backupEligible: verified.backupEligible,
            backedUp: verified.backedUp, transports: Self.transports(credential.response.transports),
            attestationFormat: verified.attestation.format, attestationTrust: verified.attestation.trust.rawValue,
            createdAt: now, lastUsedAt: nil)
        guard try await store.insert(record, addedBy: addedBy) else { throw Self.alreadyRegistered }
        try await audit.record(
            .factorAdded, user: user.id,
            detail: "webauthn (\(record.attestationFormat), attestation \(record.attestationTrust))", origin: origin)
        return record
    }

    // MARK: Authentication

    /// A verified assertion: whose passkey it was, and what it showed.
    struct Authenticated: Sendable {
        let passkey: PasskeyRecord
        let userVerified: Bool
        /// The RFC 8176 method: `swk` for a passkey that may be synced (BE set), `hwk` for one
        /// bound to its device.
        let amr: String
    }

    /// §7.2: verifies an assertion over a challenge from `requestOptions(purpose…)`. For a login
    /// flow or a step-up, the passkey must be `userID`'s; for a passwordless sign-in (no
    /// `userID`), the `userHandle` finds the account and must be the passkey's.
    func authenticate(
        _ credential: AuthenticationCredential, purpose: PasskeyChallengeRecord.Purpose, userID: UUID?, flowID: UUID?,
        origin: RequestOrigin
    ) async throws -> Authenticated {
        try await commit(
            try await verify(credential, purpose: purpose, userID: userID, flowID: flowID, origin: origin),
            origin: origin)
    }

    /// An assertion that verified, not yet committed: the challenge and passkey it was checked
    /// against, as read.
    struct Verified: Sendable {
        let challenge: PasskeyChallengeRecord
        let passkey: PasskeyRecord
        let assertion: RelyingParty.Assertion

        var amr: String { assertion.backupEligible ? "swk" : "hwk" }
    }

    /// The reads and the cryptography of `authenticate`, with no write but a possible clone's
    /// audit: what a second step does where the request runs, before its unit of work.
    func verify(
        _ credential: AuthenticationCredential, purpose: PasskeyChallengeRecord.Purpose, userID: UUID?, flowID: UUID?,
        origin: RequestOrigin
    ) async throws -> Verified {
        try Self.checkType(credential.type)
        let clientDataJSON = try Self.bytes(credential.response.clientDataJSON, "credential.response.clientDataJSON")
        let authenticatorData = try Self.bytes(
            credential.response.authenticatorData, "credential.response.authenticatorData")
        let signature = try Self.bytes(credential.response.signature, "credential.response.signature")
        let userHandle = try credential.response.userHandle.map { try Self.bytes($0, "credential.response.userHandle") }
        guard let rawID = Base64URL.decode(credential.id), !rawID.isEmpty,
            rawID.count <= AuthenticatorData.maximumCredentialIDLength
        else { throw InputValidation.failure(["credential.id": "must be a credential ID in base64url"]) }
        let (challenge, client) = try await issuedChallenge(
            clientDataJSON, purpose: purpose, userID: userID, flowID: flowID)
        guard let passkey = try await store.credential(id: Base64URL.encode(rawID)),
            userID == nil || passkey.userID == userID
        else {
            throw Self.refusal(
                "unknown_credential", "this server has no such passkey for this account; sign in another way")
        }
        if purpose == .signIn, userHandle == nil {
            throw Self.refusal("user_handle_missing", "a passwordless sign-in needs the passkey's userHandle")
        }
        if let userHandle, userHandle != Self.userHandle(passkey.userID) {
            throw Self.refusal("user_handle_mismatch", "the userHandle does not name the account this passkey is for")
        }
        let rp = purpose == .signIn ? passwordless : relyingParty
        let assertion: RelyingParty.Assertion
        let stored = RelyingParty.StoredCredential(
            publicKey: Base64URL.decode(passkey.publicKey) ?? [], signCount: UInt32(clamping: passkey.signCount),
            backupEligible: passkey.backupEligible, backedUp: passkey.backedUp)
        do {
            assertion = try await withTaskExecutorPreference(ceremonies) {
                try rp.verifyAssertion(
                    clientData: client, authenticatorData: authenticatorData, signature: signature,
                    challenge: client.challenge, credential: stored)
            }
        } catch let error as WebAuthnError {
            if error.reason == .counterRegression {
                // A copy of a response that just signed in moved the counter first: a replay of a
                // used challenge, not a clone.
                if try await store.challenge(challenge.challenge)?.usedAt != nil { throw Self.challengeUsed }
                try await audit.record(
                    .passkeyPossibleClone, user: passkey.userID, detail: "\(passkey.name): \(error.message)",
                    origin: origin)
            }
            throw Self.problem(error)
        }
        return Verified(challenge: challenge, passkey: passkey, assertion: assertion)
    }

    /// The writes of `authenticate`: uses the challenge up and moves the counter, each with one
    /// conditional update, so of parallel copies of one response exactly one gets through.
    func commit(_ verified: Verified, origin: RequestOrigin) async throws -> Authenticated {
        let (challenge, passkey, assertion) = (verified.challenge, verified.passkey, verified.assertion)
        let now = try await claim(challenge)
        // Conditional on the counter read above: a use that moved it meanwhile (another
        // challenge, the same authenticator) wins, and this one is refused as a replay.
        guard
            try await store.recordUse(
                passkey.credentialID, previousCount: passkey.signCount, signCount: Int(assertion.signCount),
                backupEligible: assertion.backupEligible, backedUp: assertion.backedUp, now: now)
        else { throw Self.challengeUsed }
        if assertion.backupStateChanged {
            try await audit.record(
                .passkeyBackupStateChanged, user: passkey.userID,
                detail: "\(passkey.name): backup eligible \(passkey.backupEligible) → \(assertion.backupEligible), "
                    + "backed up \(passkey.backedUp) → \(assertion.backedUp)", origin: origin)
        }
        return Authenticated(passkey: passkey, userVerified: assertion.userVerified, amr: verified.amr)
    }

    /// Uses `challenge` up with one conditional update and answers the time it did; refused as
    /// expired or used when this call did not get it.
    private func claim(_ challenge: PasskeyChallengeRecord) async throws -> Date {
        let now = clock.now()
        guard try await store.claimChallenge(id: challenge.id, now: now) else { throw refusal(challenge, at: now) }
        return now
    }

    /// Why the writes of a verified assertion were refused at `now` (`commit`'s, or a store's
    /// that makes them in one statement): its challenge expired, else it or the passkey's
    /// counter was used meanwhile.
    func refusal(_ challenge: PasskeyChallengeRecord, at now: Date) -> Problem {
        challenge.expiresAt <= now ? challengeExpired : Self.challengeUsed
    }

    /// A verified assertion whose writes were all refused together (`PasskeySignInStore`): its
    /// challenge is used up all the same, as `commit` leaves it, so that sending the assertion
    /// again is refused as a replay (`409`) rather than checked again against a counter another
    /// use has moved, which would read as a cloned passkey.
    func refused(_ verified: Verified, at now: Date) async throws -> Never {
        _ = try await store.claimChallenge(id: verified.challenge.id, now: now)
        throw refusal(verified.challenge, at: now)
    }

    /// The challenge `clientDataJSON` carries, if this server issued it for this ceremony and it
    /// is still usable, and the client data as read (the ceremony checks the rest of it).
    private func issuedChallenge(
        _ clientDataJSON: [UInt8], purpose: PasskeyChallengeRecord.Purpose, userID: UUID?, flowID: UUID?
    ) async throws -> (PasskeyChallengeRecord, ClientData) {
        let client: ClientData
        do { client = try ClientData(json: clientDataJSON) } catch { throw Self.problem(error) }
        guard client.challenge.count == 32,
            let challenge = try await store.challenge(Base64URL.encode(client.challenge)),
            challenge.purpose == purpose, challenge.userID == userID || (userID == nil && purpose == .signIn),
            challenge.flowID == flowID
        else {
            throw Self.problem(
                WebAuthnError(
                    .challengeMismatch, "the client data's challenge is not one this server issued for this ceremony")
            )
        }
        if challenge.usedAt != nil { throw Self.challengeUsed }
        if challenge.expiresAt <= clock.now() { throw challengeExpired }
        return (challenge, client)
    }

    // MARK: Managing

    func list(userID: UUID) async throws -> [PasskeyDTO] {
        try await store.credentials(userID: userID).map(Self.dto)
    }

    func rename(_ credentialID: String, userID: UUID, to name: String) async throws -> PasskeyDTO {
        let name = try Self.validName(name)
        guard try await store.rename(credentialID, userID: userID, to: name),
            let renamed = try await store.credential(id: credentialID), renamed.userID == userID
        else { throw Self.notFound }
        return Self.dto(renamed)
    }

    /// Deletes the passkey; the caller has stepped up.
    func delete(_ credentialID: String, userID: UUID, origin: RequestOrigin) async throws {
        guard try await store.delete(credentialID, userID: userID) else { throw Self.notFound }
        try await audit.record(.factorRemoved, user: userID, detail: FactorMethod.webauthn.rawValue, origin: origin)
    }

    /// Every passkey of `userID`'s, deleted (each audited, as `delete` does); how many this call
    /// deleted (one removed meanwhile by a request of its own is not counted).
    func removeAll(userID: UUID, origin: RequestOrigin) async throws -> Int {
        var removed = 0
        for passkey in try await store.credentials(userID: userID) {
            do {
                try await delete(passkey.credentialID, userID: userID, origin: origin)
                removed += 1
            } catch let problem as Problem where problem.code == .notFound {
                continue
            }
        }
        return removed
    }

    static func dto(_ record: PasskeyRecord) -> PasskeyDTO {
        PasskeyDTO(
            id: record.credentialID, name: record.name, createdAt: record.createdAt, lastUsedAt: record.lastUsedAt,
            transports: record.transports, synced: record.backedUp, deviceBound: !record.backupEligible,
            provider: PasskeyProviders.name(aaguid: record.aaguid), aaguid: record.aaguid,
            attestationFormat: record.attestationFormat, attestation: record.attestationTrust)
    }

    // MARK: Input and problems

    /// A passkey's name: 1 to 64 code points, not all spaces, no control characters (C0, DEL,
    /// C1), no line or paragraph separators and no bidirectional controls (a name that reorders
    /// or breaks the text around it, in a list or a notice; issue T); spaces around it are
    /// dropped. Exactly the document's `PasskeyName`.
    static func validName(_ text: String) throws -> String {
        let scalars = text.unicodeScalars
        let name = text.trimmingCharacters(in: CharacterSet(charactersIn: " "))
        guard scalars.count <= 64, !name.isEmpty, !scalars.contains(where: InputValidation.isControlOrBidi)
        else {
            throw InputValidation.failure([
                "name": "must be 1 to 64 characters, not all spaces, without control characters"
            ])
        }
        return name
    }

    /// The transports a browser reported, of those WebAuthn names.
    static func transports(_ reported: [String]?) -> [String] {
        let known: Set = ["usb", "nfc", "ble", "smart-card", "hybrid", "internal"]
        var seen: [String] = []
        for transport in reported ?? [] where known.contains(transport) && !seen.contains(transport) {
            seen.append(transport)
        }
        return seen
    }

    private static func checkType(_ type: String) throws {
        guard type == "public-key" else { throw InputValidation.failure(["credential.type": "must be public-key"]) }
    }

    private static func bytes(_ text: String, _ field: String) throws -> [UInt8] {
        guard !text.isEmpty, let bytes = Base64URL.decode(text) else {
            throw InputValidation.failure([field: "must be base64url"])
        }
        return bytes
    }

    /// A ceremony's refusal: `signature_invalid` and `counter_regression` as for device keys,
    /// everything else `webauthn_refused`; the stable reason in `errors.credential`, the sentence
    /// in `detail`.
    static func problem(_ error: WebAuthnError) -> Problem {
        switch error.reason {
        case .badSignature:
            Problem(
                status: 401, code: .signatureInvalid, title: "Passkey signature invalid", detail: error.message,
                errors: ["credential": error.reason.rawValue])
        case .counterRegression:
            Problem(
                status: 401, code: .counterRegression, title: "Passkey counter went back", detail: error.message,
                errors: ["credential": error.reason.rawValue])
        default: refusal(error.reason.rawValue, error.message)
        }
    }

    static func refusal(_ reason: String, _ message: String) -> Problem {
        Problem(
            status: 422, code: .webauthnRefused, title: "Passkey refused", detail: message,
            errors: ["credential": reason])
    }

    private var challengeExpired: Problem {
        let seconds = Int(settings.challengeLifetime)
        return Problem(
            status: 401, code: .expired, title: "Passkey challenge expired",
            detail: "A passkey challenge is valid for \(seconds) seconds; ask for new options.")
    }

    static let challengeUsed = Problem(
        status: 409, code: .alreadyUsed, title: "Passkey challenge already used",
        detail: "Each challenge serves one ceremony; ask for new options.")

    static let alreadyRegistered = Problem(
        status: 409, code: .conflict, title: "Passkey already registered",
        detail: "This passkey is already registered on this server.")

    static let noPasskey = Problem(
        status: 422, code: .validationFailed, title: "Method not available",
        detail: "This account has no passkey.", errors: ["method": "not enabled"])

    static let notFound = Problem(status: 404, code: .notFound, title: "No such passkey")
}

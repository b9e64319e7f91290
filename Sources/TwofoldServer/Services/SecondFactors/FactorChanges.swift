import Foundation
import TwofoldAPI

/// What happens around adding a factor, once `SignInPolicy` allowed it (issue S item 1, issue T):
/// - the factor is recorded on the adding session *before* it becomes usable
///   (`recordAdding`), so no step-up that finds it usable can miss the record: a factor added
///   in a session never vouches for that session;
/// - the user is told by email and SMS whenever a factor is added (`notifyAdded`), so a factor
///   they did not add does not go unnoticed;
/// - and whenever one is removed or weakened (`removed`, issue V items 1 and 8): the sessions
///   that proved it end, and the user is told, with a way back for a change that was not theirs.
struct FactorChanges: Sendable {
    let sessions: SessionService
    let deviceKeys: DeviceKeyService
    let passkeys: PasskeyService
    let outbox: Outbox
    let configuration: Configuration
    let clock: ServerClock
    let users: any UserStore
    let secondFactors: SecondFactors
    let audit: Auditor

    /// The name a proof or an added factor is recorded under: `totp`, `sms`, `email`, `backup`,
    /// `deviceKey:<deviceId>` (one device's key, not every device's), `webauthn:<credential
    /// ID>` (one passkey) or `password` (`SessionProofs`).
    static func factorName(method: FactorMethod, deviceID: String? = nil, credentialID: String? = nil) -> String {
        switch method {
        case .deviceKey: "\(method.rawValue):\(deviceID ?? "")"
        case .webauthn: "\(method.rawValue):\(credentialID ?? "")"
        default: method.rawValue
        }
    }

    /// Records on the caller's session that it adds `factors`. Called before the factor is
    /// stored: were the addition to fail after, the session only loses a proof it never had.
    func recordAdding(_ factors: [String], caller: AuthenticatedUser) async throws {
        try await sessions.recordAdded(factors, sessionID: caller.sessionID)
    }

    /// Records `factor` (a name from `factorName`) and, when the account had none, the backup
    /// codes made with it: a first factor brings them, and they never vouch for this session either.
    func recordAdding(_ factor: String, withNewBackupCodes: Bool, caller: AuthenticatedUser) async throws {
        try await recordAdding(
            withNewBackupCodes ? [factor, Self.factorName(method: .backup)] : [factor], caller: caller)
    }

    /// After `factors` (`Proof.factor` names) were removed from `userID`'s account or weakened
    /// (`description` says what, in words): with no second factor left, backup codes and
    /// remembered devices go too (`SecondFactors.purgeIfNoneLeft`); the sessions that proved a
    /// removed factor end (`endSessionsThatProved`); and the owner is told at every verified
    /// address, with the way to recover an account a change that was not theirs came from.
    func removed(
        _ description: String, factors: Set<String>, userID: UUID, keeping kept: UUID?, origin: RequestOrigin
    ) async throws {
        try await secondFactors.purgeIfNoneLeft(userID: userID, origin: origin)
        try await endSessionsThatProved(factors, andAdders: true, userID: userID, keeping: kept, origin: origin)
        guard let user = try await users.user(id: userID) else { return }
        try await notifyRemoved(description, user: user)
    }

    /// Ends every live session of `userID` but `kept` (the caller's: it proved something else to
    /// be let through) that proved one of `factors` in a version the account no longer has as a
    /// second factor — a removed passkey, a replaced key or authenticator app, an old phone or
    /// address, a proof recorded before proofs were bound — or that added one of them (issue V
    /// item 1). `replaced`: the factors whose every proof is dead though the kind lives on (new
    /// backup codes replace the old ones). `andAdders`: for a removal, also the sessions that
    /// added one of `factors` (the owner removes what an intruder's session added; that session
    /// goes with it).
    func endSessionsThatProved(
        _ factors: Set<String>, replaced: Set<String> = [], andAdders: Bool = false, userID: UUID,
        keeping kept: UUID?, origin: RequestOrigin
    ) async throws {
        guard let user = try await users.user(id: userID) else { return }
        let account = try await secondFactors.credentials(for: user)
        let kinds = account.secondFactorKinds
        // A factor name still live after the change (SMS codes staying when an SMS sign-in device
        // goes, say): its adders keep their sessions.
        let stillLive = Set(
            factors.filter { name in
                guard let proof = Proof(stored: Substring(name)) else { return false }
                return proof.credential == nil ? kinds.contains(proof.method) : account.isLive(proof)
            })
        let ended = try await sessions.endSessions(of: userID, except: kept) { session in
            (andAdders && !session.added.isDisjoint(with: factors.subtracting(stillLive)))
                || session.proofs.keys.contains { proof in
                    replaced.contains(proof.factor)
                        || (factors.contains(proof.factor)
                            && (proof.isUnbound || !(account.isLive(proof) && kinds.contains(proof.method))))
                }
        }
        if ended > 0 {
            try await audit.record(
                .sessionRevoked, user: userID, detail: "\(ended) session(s) that proved a removed factor",
                origin: origin)
        }
    }

    /// Tells the user that `description` was removed or weakened, with the way to recover the
    /// account when it was not them ("this wasn't me").
    func notifyRemoved(_ description: String, user: User) async throws {
        try await notify(
            user, subject: "A sign-in method was removed from your account",
            body: "Twofold: \(description) was removed from your account. If this was not you, someone else may "
                + "be using it: recover your account at \(configuration.publicURL)/\(Pages.recovery.path)")
    }

    /// Tells the user that `description` was added.
    func notifyAdded(_ description: String, user: User) async throws {
        try await notify(
            user, subject: "A sign-in method was added to your account",
            body: "Twofold: \(description) was added to your account. If this was not you, sign in, remove it "
                + "and change your password.")
    }

    /// Sends `body` to the user's email address and phone number, each only once verified: an
    /// address typed at registration may be a stranger's until a link sent there is used.
    func notify(_ user: User, subject: String, body: String) async throws {
        let now = clock.now()
        if configuration.delivers(.email), let email = user.verifiedEmail {
            try await outbox.enqueue(.email, to: email, subject: subject, body: body, now: now)
        }
        if configuration.delivers(.sms), let sms = user.verifiedPhone {
            try await outbox.enqueue(.sms, to: sms, body: body, now: now)
        }
    }

    /// What can still sign in to the account without its password, in words for a notice
    /// (issue T item 3): device keys, SMS sign-in devices and passkeys. Each is named by what it
    /// is and when it was added (a passkey also by its provider), never by a name or model its
    /// adder chose.
    func withoutPassword(userID: UUID) async throws -> String {
        var items: [String] = []
        for device in try await deviceKeys.store.devices(userID: userID) {
            items.append(
                device.method == .secureEnclave
                    ? "a device key enrolled \(Self.day(device.enrolledAt))"
                    : "SMS sign-in for a device enrolled \(Self.day(device.enrolledAt))")
        }
        for passkey in try await passkeys.list(userID: userID) {
            items.append(
                "a passkey from \(passkey.provider ?? "an unknown provider") added \(Self.day(passkey.createdAt))")
        }
        guard !items.isEmpty else { return "Nothing else can sign in to your account without the password." }
        return "These can still sign in without the password: " + items.joined(separator: "; ")
            + ". Remove any you do not recognise."
    }

    /// `2026-11-25 22:46 UTC`: when something was added, for a notice.
    static func moment(_ date: Date) -> String {
        let text = ISO8601DateFormatter.string(
            from: date, timeZone: .gmt, formatOptions: [.withFullDate, .withTime, .withColonSeparatorInTime])
        return text.replacingOccurrences(of: "T", with: " ").prefix(16) + " UTC"
    }

    static func day(_ date: Date) -> String {
        ISO8601DateFormatter.string(from: date, timeZone: .gmt, formatOptions: [.withFullDate]) + " (UTC)"
    }
}

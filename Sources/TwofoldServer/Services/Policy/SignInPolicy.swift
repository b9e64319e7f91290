import Foundation
import TwofoldAPI

/// What a session has proven: each proof and when (`Proof`, bound to its credential), and the
/// factors it added itself (`Proof.factor` names), which never count as its proof (issue S item
/// 1, issue T).
struct SessionProof: Sendable, Equatable {
    var proofs: [Proof: Date] = [:]
    var added: Set<String> = []

    init(proofs: [Proof: Date] = [:], added: Set<String> = []) {
        self.proofs = proofs
        self.added = added
    }

    init(_ session: SessionRecord) {
        self.init(proofs: session.proofs, added: Set(session.addedFactors))
    }

    /// The proofs given since `cutoff` that still name a live credential of `account`, less
    /// the factors the session added.
    func recent(since cutoff: Date, account: SignInCredentials) -> Set<Proof> {
        Set(proofs.filter { $0.value >= cutoff && !added.contains($0.key.factor) && account.isLive($0.key) }.keys)
    }

    /// Whether the session proved anything but codes sent to the phone or the mailbox (seed
    /// 004's SMS sign-in proves a code alone: the one factor a SIM swap hands over).
    var provesMoreThanACode: Bool {
        proofs.keys.contains { !added.contains($0.factor) && !$0.method.isSentCode }
    }

    /// Whether a recovery pass began this session.
    var isRecovery: Bool { proofs[.recovery] != nil }
}

/// What can sign in, or complete a sign-in, to an account (issue V item 2): one definition that
/// the login flow's offer, the sign-in policy, the purge of a last factor, the recovery hold and
/// gate, and `availableMethods` all read. Built from the credentials themselves, so it also says
/// which proofs still name a live one (`isLive`).
struct SignInCredentials: Sendable, Equatable {
    /// Every kind of credential an account can hold. `SignInCredentialsAgreementTests` gives an
    /// account each kind alone and asks every reader: a kind one of them forgets fails there.
    enum Kind: String, CaseIterable, Sendable {
        case totp, passkey, deviceKey, smsDevice, smsCodes, emailCodes, backupCodes
    }

    /// The active authenticator-app secret.
    var totpSecret: UUID?
    /// Each passkey's credential ID.
    var passkeyIDs: Set<String> = []
    /// Each device holding a Secure Enclave key (seed 004; it signs in without the password), by
    /// device ID, with its key.
    var deviceKeys: [String: String] = [:]
    /// Seed 004 devices enrolled for SMS sign-in: an SMS code to the verified phone signs in,
    /// and it is the second step of a password sign-in.
    var smsDeviceIDs: Set<String> = []
    /// SMS codes as a second factor (enabled, to a verified number).
    var smsCodes = false
    var emailCodes = false
    var backupCodes = 0
    /// The number proven by a code: a step-up code can go there, and SMS codes of either kind.
    var phone: String?
    /// The address on file: a step-up code can go there.
    var email = ""
    /// An administrator's account: its sign-in methods change only by an administrator's factor
    /// (`administratorFactorKinds`), never by a code to the mailbox.
    var administrator = false

    init(
        totpSecret: UUID? = nil, passkeyIDs: Set<String> = [], deviceKeys: [String: String] = [:],
        smsDeviceIDs: Set<String> = [], smsCodes: Bool = false, emailCodes: Bool = false, backupCodes: Int = 0,
        phone: String? = nil, email: String = ""
    ) {
        self.totpSecret = totpSecret
        self.passkeyIDs = passkeyIDs
        self.deviceKeys = deviceKeys
        self.smsDeviceIDs = smsDeviceIDs
        self.smsCodes = smsCodes
        self.emailCodes = emailCodes
        self.backupCodes = backupCodes
        self.phone = phone
        self.email = email
    }

    /// `user`'s, from what their own tables hold.
    init(user: User, stored: StoredFactors) {
        self.init(
            totpSecret: stored.totp, passkeyIDs: stored.passkeys, deviceKeys: stored.deviceKeys,
            smsDeviceIDs: stored.smsDevices, smsCodes: user.smsEnabled && user.verifiedPhone != nil,
            emailCodes: user.emailEnabled, backupCodes: stored.unusedBackupCodes, phone: user.verifiedPhone,
            email: user.email)
        administrator = user.role == .admin
    }

    /// The kinds of proof that vouch for a change to this account's sign-in methods: its second
    /// factors, or for an administrator only an administrator's factors (issue V review: a code
    /// from the mailbox must not install the factor that opens the console).
    var vouchingFactorKinds: Set<FactorMethod> { administrator ? administratorFactorKinds : secondFactorKinds }

    var totp: Bool { totpSecret != nil }
    var passkeys: Int { passkeyIDs.count }
    var keyDevices: Int { deviceKeys.count }
    var smsDevices: Int { smsDeviceIDs.count }
    var verifiedPhone: Bool { phone != nil }

    /// SMS codes to the verified phone complete a sign-in: as a second factor, or for an SMS
    /// sign-in device (seed 004), whose password sign-in takes the same code as its second step.
    var smsSignIn: Bool { phone != nil && (smsCodes || !smsDeviceIDs.isEmpty) }

    /// The kinds of proof that are this account's second factors (`Proof.method`). Backup codes
    /// count only beside a real factor.
    var secondFactorKinds: Set<FactorMethod> {
        var kinds: Set<FactorMethod> = []
        if totp { kinds.insert(.totp) }
        if passkeys > 0 { kinds.insert(.webauthn) }
        if keyDevices > 0 { kinds.insert(.deviceKey) }
        if smsSignIn { kinds.insert(.sms) }
        if emailCodes { kinds.insert(.email) }
        if !kinds.isEmpty, backupCodes > 0 { kinds.insert(.backup) }
        return kinds
    }

    /// Whether anything beside the password can sign in or complete a sign-in.
    var hasSecondFactor: Bool { !secondFactorKinds.isEmpty }

    /// What an administrator proves beside the password (issue V item 5): every second factor
    /// but codes to the mailbox, the address a phished password most often comes with; backup
    /// codes only beside another of these.
    var administratorFactorKinds: Set<FactorMethod> {
        var kinds = secondFactorKinds
        kinds.remove(.email)
        return kinds == [.backup] ? [] : kinds
    }

    /// The methods a login flow offers, most preferred first (passkeys lead, seed 000, unless
    /// `primary` names another); empty when a password alone signs in. Backup codes come last.
    func loginMethods(primary: FactorMethod?) -> [FactorMethod] {
        let kinds = secondFactorKinds
        var methods = FactorMethod.secondFactors.filter { kinds.contains($0) && $0 != .backup }
        if let primary, let index = methods.firstIndex(of: primary) {
            methods.insert(methods.remove(at: index), at: 0)
        }
        if kinds.contains(.backup) { methods.append(.backup) }
        return methods
    }

    /// Whether `proof` names a credential the account still has, unchanged: the password and a
    /// recovery pass always; a passkey while it exists; the authenticator app, a device's key, the
    /// phone or the address only in the version that was proven. Whether it is a second factor
    /// is `secondFactorKinds`'s to say.
    func isLive(_ proof: Proof) -> Bool {
        switch proof.method {
        case .totp: return totpSecret.map { proof == .totp(secretID: $0) } ?? false
        case .webauthn: return proof.credential.map(passkeyIDs.contains) ?? false
        case .deviceKey:
            guard let device = proof.credential, let key = deviceKeys[device] else { return false }
            return proof == .deviceKey(device, publicKey: key)
        case .sms: return phone.map { proof == .code(.sms, to: $0) } ?? false
        case .email: return proof == .code(.email, to: email)
        case .password, .backup, Proof.recovery.method: return proof.version == nil && proof.credential == nil
        default: return false
        }
    }
}

/// A change to how an account signs in or where its codes go (issue T). Every endpoint that
/// makes one names it to `SignInPolicy.require`, which alone decides.
enum SignInChange: Sendable, Equatable {
    /// Something that can sign in, or complete a sign-in, is added or replaced: `kind` is the
    /// proof kind it will give (`totp`, `webauthn`, `deviceKey`, `sms`, `email`, `backup`).
    case add(kind: FactorMethod)
    /// Where SMS or email codes go.
    case changeDestination(DeliveryChannel)
    /// A factor is removed or weakened: `proof` names it as a session proves it (`Proof.factor`:
    /// `totp`, `sms`, `email`, `webauthn:<id>`, `deviceKey:<id>`), so its own proof does not
    /// vouch for it.
    case remove(proof: String)
    /// A device key gives way to SMS sign-in (seed 004 scenario 8): the key is gone, so the
    /// password with a fresh code to the verified phone also does.
    case downgrade(proof: String)
    /// Settings that neither add nor remove a way in: the primary method, a passkey's name, a
    /// device's PIN and biometrics (which also ask their own proof).
    case configure
    /// Only takes access away: signing out everywhere, ending a session, forgetting a
    /// remembered device.
    case signOut
    /// The current password is in the request, and proves itself.
    case changePassword
    /// An administrator's decision over another account (a recovery approved or denied, every
    /// factor reset, an unlock): the administrator's own second factor, recently — never the
    /// password alone (`SignInCredentials.administratorFactorKinds`).
    case administer
}

/// What the caller must still do.
enum SignInDecision: Sendable, Equatable {
    case allowed
    case stepUp(SignInNeed)
}

/// Why a change was refused, and what would let it through.
enum SignInNeed: String, Sendable, Equatable {
    /// The session proved only an SMS or email code.
    case moreThanACode
    /// A password-only account: the password, re-entered in the last minutes.
    case recentPassword
    /// A second factor of the account, proven in the last minutes.
    case recentSecondFactor
    /// Removing: another factor, or the password with a fresh code.
    case otherProof
    /// The account was just recovered: only the session the recovery pass began sets up its
    /// first factor.
    case recoverySession
    /// An administrator without a second factor of their own administers nothing.
    case administratorFactor
}

/// The sign-in policy (issue T): for every change to how an account signs in, what the calling
/// session must have proven and how recently, from the session's own proofs and from
/// everything that can sign in to the account. `docs/security.md` holds it as a table, and
/// `SignInPolicyMatrixTests` walks that table over HTTP.
struct SignInPolicy: Sendable {
    let secondFactors: SecondFactors
    let sessions: SessionService
    let clock: ServerClock
    /// How recent a proof must be (`ProductRules.stepUpWindow`, seed 000: 5 minutes).
    let window: TimeInterval
    let recoveryHold: RecoveryHold

    /// Throws `403 step_up_required` unless the caller may make `change` to `user`'s account.
    /// Reads the session afresh, so an addition recorded since the request came in counts.
    func require(_ change: SignInChange, caller: AuthenticatedUser, user: User) async throws {
        let account = try await secondFactors.credentials(for: user)
        // Asked only of an account with no factor, the one state a recovery's hold matters in.
        let held = account.secondFactorKinds.isEmpty ? try await recoveryHold.holds(userID: user.id) : false
        let decision = Self.decide(
            change, proof: try await sessions.proof(of: caller), account: account, now: clock.now(), window: window,
            recoveryHold: held)
        if case .stepUp(let need) = decision { throw Self.problem(need, window: window) }
    }

    /// The one gate of administration (issue V item 5), which the API's `AdminOnly`, the
    /// console's pages and every other administrator's reading ask: an active administrator
    /// whose account has a second factor of its own and whose session proved one that is still
    /// live. The administrator's account, or `403`.
    @discardableResult
    func admitAdministrator(_ caller: AuthenticatedUser) async throws -> User {
        guard let user = try await secondFactors.users.user(id: caller.userID), user.isActiveAdmin else {
            throw Problem(status: 403, code: .forbidden, title: "Forbidden", detail: "This needs an administrator.")
        }
        let account = try await secondFactors.credentials(for: user)
        let kinds = account.administratorFactorKinds
        guard !kinds.isEmpty else { throw Self.problem(.administratorFactor, window: window) }
        let proof = try await sessions.proof(of: caller)
        // A code alone (seed 004's SMS sign-in: what a SIM swap hands over) opens nothing here.
        guard proof.provesMoreThanACode else { throw Self.problem(.moreThanACode, window: window) }
        let proven = proof.recent(since: .distantPast, account: account)
        guard proven.contains(where: { kinds.contains($0.method) }) else {
            throw Self.problem(.recentSecondFactor, window: window)
        }
        return user
    }

    /// Whether `caller` passes `admitAdministrator`.
    func isAdministrator(_ caller: AuthenticatedUser) async throws -> Bool {
        do {
            try await admitAdministrator(caller)
            return true
        } catch let problem as Problem where problem.status == 403 {
            return false
        }
    }

    /// The rules, as `docs/security.md`'s table states them.
    /// `recoveryHold`: a recovery's pass was used lately and the account has no factor yet, so
    /// only the session the pass began may add one (`RecoveryHold`).
    static func decide(
        _ change: SignInChange, proof: SessionProof, account: SignInCredentials, now: Date, window: TimeInterval,
        recoveryHold: Bool = false
    ) -> SignInDecision {
        switch change {
        case .signOut, .changePassword: return .allowed
        default: break
        }
        // A session that proved only a code changes nothing until it proves more.
        guard proof.provesMoreThanACode else { return .stepUp(.moreThanACode) }
        // Only proofs of credentials the account still has, as they were (issue V item 1).
        let recentProofs = proof.recent(since: now.addingTimeInterval(-window), account: account)
        let recent = Set(recentProofs.map(\.factor))
        let passwordRecent = recentProofs.contains(.password)
        let kinds = account.vouchingFactorKinds
        let recentFactors = Set(recentProofs.filter { kinds.contains($0.method) }.map(\.factor))
        switch change {
        case .signOut, .changePassword, .configure:
            return .allowed
        case .add, .changeDestination:
            // A session a recovery pass began vouches for a first factor, however long ago it
            // began (it exists for that, and may do nothing else): the reviewer decided.
            if kinds.isEmpty {
                if proof.isRecovery { return .allowed }
                if recoveryHold { return .stepUp(.recoverySession) }
                return passwordRecent ? .allowed : .stepUp(.recentPassword)
            }
            return recentFactors.isEmpty ? .stepUp(.recentSecondFactor) : .allowed
        case .administer:
            let adminKinds = account.administratorFactorKinds
            if adminKinds.isEmpty { return .stepUp(.administratorFactor) }
            return recentProofs.contains { adminKinds.contains($0.method) } ? .allowed : .stepUp(.recentSecondFactor)
        case .remove(let removed), .downgrade(let removed):
            // Another of the account's factors, proven recently, vouches for the removal.
            if !recentFactors.subtracting([removed]).isEmpty { return .allowed }
            // Or the password re-entered beside a fresh code to the mailbox (the owner's way to
            // remove what they did not add), beside the factor itself, or — for a downgrade,
            // whose key is gone — beside a fresh code to the verified phone.
            guard passwordRecent else { return .stepUp(.otherProof) }
            // Never the mailbox for an administrator's account.
            var vouching: Set<String> = account.administrator ? [] : [FactorMethod.email.rawValue]
            if let factor = Proof(stored: Substring(removed)), kinds.contains(factor.method) {
                vouching.insert(removed)
            }
            // On an administrator's account only when SMS is one of the administrator's factors.
            if case .downgrade = change, account.verifiedPhone, !account.administrator || kinds.contains(.sms) {
                vouching.insert(FactorMethod.sms.rawValue)
            }
            return recent.isDisjoint(with: vouching) ? .stepUp(.otherProof) : .allowed
        }
    }

    static func problem(_ need: SignInNeed, window: TimeInterval) -> Problem {
        let within = "within \(window.inWords)"
        let detail: String
        switch need {
        case .moreThanACode:
            detail =
                "A session that proved only an SMS or email code cannot change how the account signs in; "
                + "step up with your password or another factor, then repeat the request."
        case .recentPassword:
            detail = "Step up with your password, then repeat the request \(within)."
        case .recentSecondFactor:
            detail = "Step up with a second factor you had before this session, then repeat the request \(within)."
        case .recoverySession:
            detail =
                "This account was just recovered: set up a sign-in method in the session the recovery link opened, "
                + "or start recovery again."
        case .administratorFactor:
            detail =
                "Administrators sign in with a second factor: set up an authenticator app, a passkey or a key "
                + "device on your own account (codes by email do not count), then sign in with it."
        case .otherProof:
            detail =
                "Step up with another factor, or with your password and a fresh code, then repeat the request "
                + "\(within)."
        }
        return Problem(
            status: 403, code: .stepUpRequired, title: "Step-up required", detail: detail,
            errors: ["stepUp": need.rawValue])
    }
}

import Foundation
import TwofoldAPI

@testable import TwofoldServer

/// Stores kept in memory, for testing services without Vapor or a database. Each keeps the
/// contract of its SQL twin (the store contract tests run both), except `AddingSession`'s: they
/// keep no sessions, so a factor's write here never depends on one (the SQL stores' tests and the
/// end-to-end tests check that rule), and `SessionEpoch`'s: no end of every session here
/// supersedes a session, a remembered device or a login flow (`SessionEpochTests` checks the SQL
/// stores).
actor InMemoryAuditStore: AuditStore {
    private(set) var entries: [AuditEntry] = []

    func append(_ entry: AuditEntry) async throws { entries.append(entry) }

    func events(userID: UUID?, type: String?, from: Date?, to: Date?, offset: Int, limit: Int) async throws
        -> [AuditEventDTO]
    {
        entries.filter { entry in
            (userID == nil || entry.userID == userID) && (type == nil || entry.event.rawValue == type)
                && (from.map { entry.occurredAt >= $0 } ?? true) && (to.map { entry.occurredAt < $0 } ?? true)
        }
        .sorted { ($0.occurredAt, $0.id.uuidString) > ($1.occurredAt, $1.id.uuidString) }.dropFirst(offset)
        .prefix(limit).map {
            AuditEventDTO(
                id: $0.id, occurredAt: $0.occurredAt, type: $0.event.rawValue, userId: $0.userID,
                actorId: $0.actorID, ipAddress: $0.origin.address, userAgent: $0.origin.userAgent, detail: $0.detail
            )
        }
    }
}

actor InMemoryTrustedDeviceStore: TrustedDeviceStore {
    private var devices: [UUID: TrustedDeviceRecord] = [:]

    func insert(_ device: TrustedDeviceRecord) async throws { devices[device.id] = device }

    func markUsed(tokenHash: String, userID: UUID, now: Date) async throws -> Bool {
        guard
            let id = devices.values.first(where: {
                $0.tokenHash == tokenHash && $0.userID == userID && $0.revokedAt == nil && $0.expiresAt > now
            })?.id
        else { return false }
        devices[id]?.lastUsedAt = now
        return true
    }

    func live(userID: UUID, now: Date) async throws -> [TrustedDeviceRecord] {
        devices.values.filter { $0.userID == userID && $0.revokedAt == nil && $0.expiresAt > now }
            .sorted { $0.createdAt > $1.createdAt }
    }

    func revoke(id: UUID, userID: UUID, now: Date) async throws -> String? {
        guard let device = devices[id], device.userID == userID, device.revokedAt == nil else { return nil }
        devices[id]?.revokedAt = now
        return device.name
    }

    func revokeAll(userID: UUID, now: Date) async throws -> Int {
        let ids = devices.values.filter { $0.userID == userID && $0.revokedAt == nil }.map(\.id)
        for id in ids { devices[id]?.revokedAt = now }
        return ids.count
    }
}

actor InMemoryRateLimitStore: RateLimitStore {
    private var buckets: [String: (tokens: Double, updatedAt: Double)] = [:]

    func take(_ key: String, capacity: Double, perSecond: Double, now: Date) async throws -> Bool {
        let time = now.timeIntervalSince1970
        let bucket = buckets[key] ?? (capacity, time)
        let refilled =
            time <= bucket.updatedAt
            ? bucket.tokens : min(capacity, bucket.tokens + (time - bucket.updatedAt) * perSecond)
        guard refilled >= 1 else {
            buckets[key] = bucket
            return false
        }
        buckets[key] = (refilled - 1, max(time, bucket.updatedAt))
        return true
    }

    func tokens(_ key: String) async throws -> Double { buckets[key]?.tokens ?? 0 }

    func refill(_ key: String, capacity: Double, now: Date) async throws {
        if buckets[key] != nil { buckets[key] = (capacity, now.timeIntervalSince1970) }
    }

    func giveBack(_ key: String, capacity: Double) async throws {
        if let bucket = buckets[key] { buckets[key] = (min(capacity, bucket.tokens + 1), bucket.updatedAt) }
    }

    func deleteIdle(before: Date) async throws {
        for (key, bucket) in buckets where bucket.updatedAt <= before.timeIntervalSince1970 { buckets[key] = nil }
    }
}

actor InMemorySessionStore: SessionStore {
    private var sessions: [UUID: SessionRecord] = [:]
    private var added: [UUID: [String]] = [:]
    private var refreshTokens: [String: RefreshTokenRecord] = [:]

    func insert(_ session: SessionRecord, firstRefreshToken: RefreshTokenRecord) async throws {
        sessions[session.id] = session
        try await insert(firstRefreshToken)
    }

    func insert(_ refreshToken: RefreshTokenRecord) async throws {
        refreshTokens[refreshToken.tokenHash] = refreshToken
    }

    func useRefreshToken(hash: String, now: Date) async throws -> UUID? {
        guard let token = refreshTokens[hash], token.usedAt == nil, token.expiresAt > now,
            sessions[token.sessionID]?.revokedAt == nil, sessions[token.sessionID] != nil
        else { return nil }
        refreshTokens[hash]?.usedAt = now
        return token.sessionID
    }

    func refreshToken(hash: String) async throws -> RefreshTokenRecord? { refreshTokens[hash] }
    func session(id: UUID) async throws -> SessionRecord? {
        guard var session = sessions[id] else { return nil }
        session.addedFactors = added[id] ?? []
        return session
    }

    func liveSessions(userID: UUID) async throws -> [SessionRecord] {
        sessions.values.filter { $0.userID == userID && $0.revokedAt == nil }.sorted { $0.lastUsedAt > $1.lastUsedAt }
    }

    func touch(sessionID: UUID, now: Date) async throws { sessions[sessionID]?.lastUsedAt = now }

    func stepUp(sessionID: UUID, methods: [String], proofs: [Proof: Date], now: Date) async throws -> Bool {
        guard sessions[sessionID]?.revokedAt == nil, sessions[sessionID] != nil else { return false }
        sessions[sessionID]?.methods = methods
        sessions[sessionID]?.proofs = proofs
        sessions[sessionID]?.authTime = now
        sessions[sessionID]?.lastUsedAt = now
        return true
    }

    func revoke(sessionID: UUID, reason: String, now: Date) async throws -> Bool {
        guard let session = sessions[sessionID], session.revokedAt == nil else { return false }
        sessions[sessionID]?.revokedAt = now
        return true
    }

    func revokeAll(userID: UUID, except kept: UUID?, reason: String, now: Date) async throws -> Int {
        let ids = sessions.values.filter { $0.userID == userID && $0.revokedAt == nil && $0.id != kept }.map(\.id)
        for id in ids { sessions[id]?.revokedAt = now }
        return ids.count
    }

    func openReset(userID: UUID, kept: UUID?, claim: String, now: Date, until: Date) async throws -> Bool {
        true
    }
    func closeReset(userID: UUID, kept: UUID?, claim: String) async throws {}
    func closeAbandonedResets(now: Date) async throws -> [UUID] { [] }

    func recordAdded(_ factors: [String], sessionID: UUID) async throws {
        guard sessions[sessionID] != nil else { return }
        added[sessionID, default: []] += factors
    }

    func addedFactors(sessionID: UUID) async throws -> [String] { added[sessionID] ?? [] }

    func deleteExpiredRefreshTokens(now: Date) async throws {
        for (hash, token) in refreshTokens where token.expiresAt <= now { refreshTokens[hash] = nil }
    }
}

actor InMemoryFactorGuardStore: FactorGuardStore {
    private var guards: [String: FactorGuardState] = [:]
    private var failures: [(userID: UUID, at: Date)] = []

    private func key(_ userID: UUID, _ factor: String) -> String { "\(userID)|\(factor)" }

    func takeSlot(userID: UUID, factor: String, limit: Int, now: Date) async throws -> Bool {
        let key = key(userID, factor)
        guard var state = guards[key] else {
            guards[key] = FactorGuardState(attempts: 1, lockouts: 0, lockedUntil: nil)
            return true
        }
        if let until = state.lockedUntil {
            guard until <= now else { return false }
            state.attempts = 1
            state.lockedUntil = nil
        } else {
            guard state.attempts < limit else { return false }
            state.attempts += 1
        }
        guards[key] = state
        return true
    }

    func state(userID: UUID, factor: String) async throws -> FactorGuardState? { guards[key(userID, factor)] }

    func giveBack(userID: UUID, factor: String) async throws {
        guard var state = guards[key(userID, factor)], state.attempts > 0, state.lockedUntil == nil else { return }
        state.attempts -= 1
        guards[key(userID, factor)] = state
    }

    func clear(userID: UUID, factor: String) async throws {
        if guards[key(userID, factor)] != nil {
            guards[key(userID, factor)] = FactorGuardState(attempts: 0, lockouts: 0, lockedUntil: nil)
        }
    }

    func clearAll(userID: UUID) async throws {
        for key in guards.keys where key.hasPrefix("\(userID)|") {
            guards[key] = FactorGuardState(attempts: 0, lockouts: 0, lockedUntil: nil)
        }
        failures.removeAll { $0.userID == userID }
    }

    func recordFailure(id: UUID, userID: UUID, factor: String, at: Date) async throws {
        failures.append((userID, at))
    }

    func tally(userID: UUID, factor: String, since: Date) async throws -> FactorTally {
        let state = guards[key(userID, factor)]
        return FactorTally(
            failures: failures.filter { $0.userID == userID && $0.at > since }.count, attempts: state?.attempts,
            lockouts: state?.lockouts)
    }

    func lock(userID: UUID, factor: String, until: Date, limit: Int) async throws -> Bool {
        let key = key(userID, factor)
        guard var state = guards[key], state.lockedUntil == nil, state.attempts >= limit else { return false }
        state.lockedUntil = until
        state.lockouts += 1
        guards[key] = state
        return true
    }

    func deleteFailures(before: Date) async throws { failures.removeAll { $0.at <= before } }
}

actor InMemoryUserStore: UserStore {
    private var accounts: [User] = []
    /// The ids of the locked accounts.
    var locked: Set<UUID> { Set(accounts.filter { $0.status == .locked }.map(\.id)) }

    private func change(_ userID: UUID, now: Date, _ body: (inout User) -> Void) {
        guard let index = accounts.firstIndex(where: { $0.id == userID }) else { return }
        body(&accounts[index])
        accounts[index].updatedAt = now
    }

    func lock(userID: UUID, now: Date) async throws -> Bool {
        guard accounts.contains(where: { $0.id == userID && $0.status == .active }) else { return false }
        change(userID, now: now) { $0.status = .locked }
        return true
    }
    func unlock(userID: UUID, now: Date) async throws -> Bool {
        guard accounts.contains(where: { $0.id == userID && $0.status == .locked }) else { return false }
        change(userID, now: now) { $0.status = .active }
        return true
    }
    func hasAdministrator() async throws -> Bool { accounts.contains { $0.role == .admin } }

    func user(id: UUID) async throws -> User? { accounts.first { $0.id == id } }
    func user(identifier: String) async throws -> User? {
        accounts.first { $0.email == identifier || $0.username == identifier }
    }
    func users(matching query: String?, offset: Int, limit: Int) async throws -> [User] {
        // Appended in the order they registered, which is the order asked for.
        let needle = query?.lowercased()
        return Array(
            accounts.filter { user in needle.map { user.username.contains($0) || user.email.contains($0) } ?? true }
                .dropFirst(offset).prefix(limit))
    }
    func insert(_ user: User) async throws -> Bool {
        guard !accounts.contains(where: { $0.username == user.username || $0.email == user.email }) else {
            return false
        }
        var user = user
        (user.smsEnabled, user.emailEnabled, user.primaryMethod, user.phoneVerifiedAt) = (false, false, nil, nil)
        user.emailVerifiedAt = nil
        accounts.append(user)
        return true
    }
    func insert(_ users: [User]) async throws {
        for user in users where try await !insert(user) { throw InMemoryStoreError.conflict }
    }

    func setPasswordHash(_ hash: String, userID: UUID, now: Date, replacing: String, addedBy: AddingSession?)
        async throws -> Bool
    {
        guard accounts.first(where: { $0.id == userID })?.passwordHash == replacing else { return false }
        change(userID, now: now) { $0.passwordHash = hash }
        return true
    }
    func setVerifiedPhone(_ phone: String, userID: UUID, now: Date, addedBy: AddingSession?) async throws {
        change(userID, now: now) { ($0.phone, $0.phoneVerifiedAt) = (phone, now) }
    }
    func unverifyPhone(userID: UUID, now: Date) async throws {
        change(userID, now: now) { $0.phoneVerifiedAt = nil }
    }
    func setEmail(_ email: String, userID: UUID, now: Date, addedBy: AddingSession?) async throws -> Bool {
        guard try await !emailInUse(email, except: userID), accounts.contains(where: { $0.id == userID }) else {
            return false
        }
        change(userID, now: now) { ($0.email, $0.emailVerifiedAt) = (email, now) }
        return true
    }
    func verifyEmail(_ email: String, userID: UUID, now: Date) async throws -> Bool {
        guard accounts.contains(where: { $0.id == userID && $0.email == email }) else { return false }
        change(userID, now: now) { $0.emailVerifiedAt = $0.emailVerifiedAt ?? now }
        return true
    }
    func emailInUse(_ email: String, except userID: UUID) async throws -> Bool {
        accounts.contains { $0.email == email && $0.id != userID }
    }
    func enableCodes(_ channel: DeliveryChannel, phone: String?, userID: UUID, now: Date, addedBy: AddingSession?)
        async throws
    {
        change(userID, now: now) {
            if channel == .sms {
                ($0.smsEnabled, $0.phone, $0.phoneVerifiedAt) = (true, phone, now)
            } else {
                $0.emailEnabled = true
                $0.emailVerifiedAt = $0.emailVerifiedAt ?? now
            }
        }
    }
    func disableCodes(_ channel: DeliveryChannel, userID: UUID, now: Date) async throws -> Bool {
        guard let user = accounts.first(where: { $0.id == userID }),
            channel == .sms ? user.smsEnabled : user.emailEnabled
        else { return false }
        change(userID, now: now) {
            if channel == .sms { $0.smsEnabled = false } else { $0.emailEnabled = false }
            if $0.primaryMethod?.rawValue == channel.rawValue { $0.primaryMethod = nil }
        }
        return true
    }
    func setPrimaryMethod(_ method: FactorMethod?, userID: UUID, now: Date) async throws {
        change(userID, now: now) { $0.primaryMethod = method }
    }

    /// The stored factors a test gives a user (none unless set).
    var factors: [UUID: StoredFactors] = [:]
    func setFactors(_ stored: StoredFactors, for userID: UUID) { factors[userID] = stored }
    func storedFactors(userID: UUID) async throws -> StoredFactors {
        factors[userID] ?? StoredFactors()
    }
}

actor InMemoryLoginFlowStore: LoginFlowStore {
    private var flows: [UUID: LoginFlowRecord] = [:]
    /// The users flows belong to, as `pending` joins them; a user not here reads as gone.
    var users: [UUID: (user: UserDTO, status: User.Status)] = [:]

    /// The TOTP store whose active secret `pending` joins, as the SQL store's join does; none
    /// unless a test links one.
    var totp: InMemoryTOTPCredentialStore?

    func addUser(_ user: UserDTO, status: User.Status = .active) { users[user.id] = (user, status) }
    func setStatus(_ status: User.Status, of userID: UUID) { users[userID]?.status = status }
    func link(_ totp: InMemoryTOTPCredentialStore) { self.totp = totp }

    func insert(_ flow: LoginFlowRecord) async throws { flows[flow.id] = flow }
    func insert(_ flows: [LoginFlowRecord]) async throws { for flow in flows { self.flows[flow.id] = flow } }
    func flow(tokenHash: String) async throws -> LoginFlowRecord? { flows.values.first { $0.tokenHash == tokenHash } }

    func pending(tokenHash: String) async throws -> PendingSecondStep? {
        guard let flow = flows.values.first(where: { $0.tokenHash == tokenHash }), let user = users[flow.userID]
        else { return nil }
        let secret = try await totp?.credential(userID: flow.userID, status: .active).map {
            TOTPSecret(
                id: $0.id, userID: $0.userID, ciphertext: $0.secretCiphertext, algorithm: $0.algorithm,
                digits: $0.digits, period: $0.period, lastUsedStep: $0.lastUsedStep)
        }
        return PendingSecondStep(
            flowID: flow.id, firstFactor: flow.firstFactor, expiresAt: flow.expiresAt, consumedAt: flow.consumedAt,
            user: user.user, userStatus: user.status, totp: secret, sessionEpoch: flow.sessionEpoch, overtaken: false)
    }

    func consume(flowID: UUID, now: Date) async throws -> Bool {
        guard let flow = flows[flowID], flow.consumedAt == nil, flow.expiresAt > now,
            users[flow.userID]?.status == .active
        else { return false }
        flows[flowID]?.consumedAt = now
        return true
    }

    func release(flowID: UUID, claimedAt: Date) async throws {
        if flows[flowID]?.consumedAt == claimedAt { flows[flowID]?.consumedAt = nil }
    }

    func end(flowID: UUID, now: Date) async throws {
        guard let flow = flows[flowID], flow.expiresAt > now else { return }
        flows[flowID]?.consumedAt = flow.consumedAt ?? now
        flows[flowID]?.expiresAt = now
    }

    func deleteExpired(before: Date) async throws {
        for (id, flow) in flows where flow.expiresAt <= before { flows[id] = nil }
    }
}

actor InMemoryTOTPCredentialStore: TOTPCredentialStore {
    private var credentials: [UUID: TOTPCredentialRecord] = [:]

    func credential(userID: UUID, status: TOTPCredentialRecord.Status) async throws -> TOTPCredentialRecord? {
        credentials.values.first { $0.userID == userID && $0.status == status }
    }

    func deleteAll(userID: UUID) async throws -> Int {
        let ids = credentials.values.filter { $0.userID == userID }.map(\.id)
        for id in ids { credentials[id] = nil }
        return ids.count
    }

    func replace(with pending: TOTPCredentialRecord) async throws {
        for (id, credential) in credentials where credential.userID == pending.userID && credential.status == .pending {
            credentials[id] = nil
        }
        credentials[pending.id] = pending
    }

    func claimStep(_ step: Int64, credentialID: UUID) async throws -> Bool {
        guard let credential = credentials[credentialID], (credential.lastUsedStep ?? Int64.min) < step else {
            return false
        }
        credentials[credentialID]?.lastUsedStep = step
        return true
    }

    func activate(credentialID: UUID, now: Date, addedBy: AddingSession?) async throws -> Bool {
        guard credentials[credentialID]?.status == .pending else { return false }
        credentials[credentialID]?.status = .active
        credentials[credentialID]?.confirmedAt = now
        return true
    }

    func insert(_ credentials: [TOTPCredentialRecord]) async throws {
        for credential in credentials { self.credentials[credential.id] = credential }
    }

    func deleteExpiredPending(now: Date) async throws {
        for (id, credential) in credentials where credential.status == .pending && credential.expiresAt <= now {
            credentials[id] = nil
        }
    }
}

actor InMemoryBackupCodeStore: BackupCodeStore {
    private var codes: [UUID: BackupCodeRecord] = [:]

    func replace(userID: UUID, with codes: [BackupCodeRecord], addedBy: AddingSession?) async throws {
        for code in codes { self.codes[code.id] = code }
        let kept = Set(codes.map(\.id))
        for (id, code) in self.codes where code.userID == userID && !kept.contains(id) { self.codes[id] = nil }
    }

    func code(userID: UUID, lookup: String) async throws -> BackupCodeRecord? {
        codes.values.first { $0.userID == userID && $0.lookup == lookup }
    }

    func use(id: UUID, now: Date) async throws -> Bool {
        guard codes[id] != nil, codes[id]?.usedAt == nil else { return false }
        codes[id]?.usedAt = now
        return true
    }

    func summary(userID: UUID) async throws -> BackupCodeSummary {
        let mine = codes.values.filter { $0.userID == userID }
        return BackupCodeSummary(
            unused: mine.filter { $0.usedAt == nil }.count, total: mine.count, generatedAt: mine.map(\.createdAt).max())
    }

    func deleteAll(userID: UUID) async throws {
        for (id, code) in codes where code.userID == userID { codes[id] = nil }
    }
}

actor InMemoryOutboxStore: OutboxStore {
    private(set) var messages: [UUID: OutboxRecord] = [:]

    func insert(_ message: OutboxRecord) async throws { messages[message.id] = message }

    func claimDue(now: Date, leaseUntil: Date, limit: Int) async throws -> [UUID] {
        let due = messages.values.filter { ($0.status == .pending || $0.status == .sending) && $0.nextAttemptAt <= now }
            .sorted { $0.nextAttemptAt < $1.nextAttemptAt }.prefix(limit).map(\.id)
        for id in due {
            messages[id]?.status = .sending
            messages[id]?.attempts += 1
            messages[id]?.nextAttemptAt = leaseUntil
        }
        return due
    }

    func message(id: UUID) async throws -> OutboxRecord? { messages[id] }

    func markSent(id: UUID, now: Date) async throws {
        messages[id]?.status = .sent
        messages[id]?.sentAt = now
        messages[id]?.bodyCiphertext = ""
        messages[id]?.lastError = nil
    }

    func markUndelivered(id: UUID, error: String, retryAt: Date?) async throws {
        messages[id]?.lastError = error
        if let retryAt {
            messages[id]?.status = .pending
            messages[id]?.nextAttemptAt = retryAt
        } else {
            messages[id]?.status = .failed
            messages[id]?.bodyCiphertext = ""
        }
    }
}

actor InMemoryOneTimeCodeStore: OneTimeCodeStore {
    private var codes: [UUID: OneTimeCodeRecord] = [:]

    func supersede(
        userID: UUID, channel: DeliveryChannel, purpose: OneTimeCodeRecord.Purpose, flowID: UUID?, now: Date
    ) async throws {
        for (id, code) in codes
        where code.userID == userID && code.channel == channel && code.purpose == purpose && code.usedAt == nil
            && (flowID == nil || code.flowID == flowID)
        {
            codes[id]?.usedAt = now
        }
    }

    func insert(_ code: OneTimeCodeRecord) async throws { codes[code.id] = code }

    func usedSince(
        userID: UUID, channel: DeliveryChannel, purpose: OneTimeCodeRecord.Purpose, flowID: UUID?, since: Date
    ) async throws -> OneTimeCodeRecord? {
        let newest = codes.values.filter {
            $0.userID == userID && $0.channel == channel && $0.purpose == purpose
                && (flowID == nil || $0.flowID == flowID)
        }.max { $0.createdAt < $1.createdAt }
        guard let newest, let used = newest.usedAt, used >= since else { return nil }
        return newest
    }

    func live(
        userID: UUID, channel: DeliveryChannel, purpose: OneTimeCodeRecord.Purpose, flowID: UUID?, now: Date,
        maximumFailures: Int
    ) async throws -> OneTimeCodeRecord? {
        codes.values.filter {
            $0.userID == userID && $0.channel == channel && $0.purpose == purpose && $0.usedAt == nil
                && $0.expiresAt > now && $0.failures < maximumFailures && (flowID == nil || $0.flowID == flowID)
        }.max { $0.createdAt < $1.createdAt }
    }

    func latest(flowID: UUID) async throws -> OneTimeCodeRecord? {
        codes.values.filter { $0.flowID == flowID }.max { $0.createdAt < $1.createdAt }
    }

    func addFailure(id: UUID) async throws { codes[id]?.failures += 1 }

    func use(id: UUID, now: Date, maximumFailures: Int) async throws -> Bool {
        guard let code = codes[id], code.usedAt == nil, code.failures < maximumFailures else { return false }
        codes[id]?.usedAt = now
        return true
    }
}

/// What an in-memory twin throws where the database would refuse a statement.
enum InMemoryStoreError: Error {
    /// A unique name or key already taken.
    case conflict
}

actor InMemoryDeviceStore: DeviceStore {
    private var devices: [DeviceRecord] = []
    private var challenges: [UUID: DeviceChallengeRecord] = [:]

    private func change(_ id: UUID, _ body: (inout DeviceRecord) -> Void) {
        guard let index = devices.firstIndex(where: { $0.id == id }) else { return }
        body(&devices[index])
    }

    func device(id: UUID) async throws -> DeviceRecord? { devices.first { $0.id == id } }
    func device(_ deviceID: String, userID: UUID) async throws -> DeviceRecord? {
        devices.first { $0.deviceID == deviceID && $0.userID == userID }
    }
    func devices(deviceID: String) async throws -> [DeviceRecord] {
        devices.filter { $0.deviceID == deviceID }.sorted { $0.enrolledAt < $1.enrolledAt }
    }
    func devices(userID: UUID) async throws -> [DeviceRecord] {
        devices.filter { $0.userID == userID }.sorted { $0.enrolledAt < $1.enrolledAt }
    }
    func insert(_ device: DeviceRecord, addedBy: AddingSession?) async throws -> Bool {
        guard
            !devices.contains(where: {
                $0.id == device.id || ($0.userID == device.userID && $0.deviceID == device.deviceID)
            })
        else { return false }
        devices.append(device)
        return true
    }
    func changeKey(
        deviceRowID: UUID, method: DeviceRecord.Method, publicKey: String?, deviceModel: String?,
        enrolledAt: Date?, pinHash: String?, now: Date, addedBy: AddingSession?
    ) async throws {
        change(deviceRowID) {
            ($0.method, $0.publicKey, $0.updatedAt) = (method, publicKey, now)
            if let deviceModel { $0.deviceModel = deviceModel }
            if let enrolledAt { $0.enrolledAt = enrolledAt }
            if let pinHash { ($0.pinHash, $0.pinFailures, $0.pinBlocked) = (pinHash, 0, false) }
        }
        retire(deviceRowID, purpose: nil, now: now)
    }
    func changeBiometricKey(_ key: String?, deviceRowID: UUID, now: Date) async throws {
        change(deviceRowID) { ($0.biometricKey, $0.updatedAt) = (key, now) }
        retire(deviceRowID, purpose: .biometric, now: now)
    }
    private func retire(_ deviceRowID: UUID, purpose: DeviceChallengeRecord.Purpose?, now: Date) {
        for (id, challenge) in challenges
        where challenge.deviceRowID == deviceRowID && challenge.usedAt == nil
            && (purpose == nil || challenge.purpose == purpose)
        {
            challenges[id]?.usedAt = now
        }
    }
    func delete(deviceRowIDs: [UUID]) async throws -> Int {
        let before = devices.count
        devices.removeAll { deviceRowIDs.contains($0.id) }
        challenges = challenges.filter { !deviceRowIDs.contains($0.value.deviceRowID) }
        return before - devices.count
    }
    func markUsed(deviceRowID: UUID, now: Date) async throws { change(deviceRowID) { $0.lastUsedAt = now } }

    func setPIN(hash: String, deviceRowID: UUID, onlyIfNone: Bool, now: Date) async throws -> Bool {
        guard let device = devices.first(where: { $0.id == deviceRowID }), !onlyIfNone || device.pinHash == nil
        else { return false }
        change(deviceRowID) { ($0.pinHash, $0.pinFailures, $0.pinBlocked, $0.updatedAt) = (hash, 0, false, now) }
        return true
    }
    func takePINAttempt(deviceRowID: UUID, maximum: Int) async throws -> Int? {
        guard let device = devices.first(where: { $0.id == deviceRowID }), !device.pinBlocked,
            device.pinFailures < maximum
        else { return nil }
        change(deviceRowID) { $0.pinFailures += 1 }
        return device.pinFailures + 1
    }
    func clearPINFailures(deviceRowID: UUID) async throws { change(deviceRowID) { $0.pinFailures = 0 } }
    func blockPIN(deviceRowID: UUID) async throws -> Bool {
        guard devices.contains(where: { $0.id == deviceRowID && !$0.pinBlocked }) else { return false }
        change(deviceRowID) { $0.pinBlocked = true }
        return true
    }
    func unblockPIN(deviceRowID: UUID) async throws -> Bool {
        guard devices.contains(where: { $0.id == deviceRowID && $0.pinBlocked }) else { return false }
        change(deviceRowID) { ($0.pinBlocked, $0.pinFailures) = (false, 0) }
        return true
    }

    func insertChallenge(_ challenge: DeviceChallengeRecord) async throws {
        challenges[challenge.id] = challenge
        guard challenge.purpose != .signIn else { return }
        for (id, other) in challenges
        where id != challenge.id && other.deviceRowID == challenge.deviceRowID && other.purpose == challenge.purpose
            && other.flowID == challenge.flowID && other.usedAt == nil
        {
            challenges[id]?.usedAt = challenge.createdAt
        }
    }
    func challenge(id: UUID) async throws -> DeviceChallengeRecord? { challenges[id] }
    func claimChallenge(id: UUID, now: Date) async throws -> Bool { claim(&challenges, id: id, now: now) }
    func deleteChallenges(expiredBefore before: Date) async throws { deleteExpired(&challenges, before: before) }
}

actor InMemoryPasskeyStore: PasskeyStore {
    private var passkeys: [PasskeyRecord] = []
    private var challenges: [UUID: PasskeyChallengeRecord] = [:]

    func credentials(userID: UUID) async throws -> [PasskeyRecord] {
        passkeys.filter { $0.userID == userID }.sorted {
            ($0.createdAt, $0.id.uuidString) < ($1.createdAt, $1.id.uuidString)
        }
    }

    func credential(id credentialID: String) async throws -> PasskeyRecord? {
        passkeys.first { $0.credentialID == credentialID }
    }

    func insert(_ credential: PasskeyRecord, addedBy: AddingSession?) async throws -> Bool {
        guard !passkeys.contains(where: { $0.credentialID == credential.credentialID || $0.id == credential.id }) else {
            return false
        }
        passkeys.append(credential)
        return true
    }

    func rename(_ credentialID: String, userID: UUID, to name: String) async throws -> Bool {
        guard let index = passkeys.firstIndex(where: { $0.credentialID == credentialID && $0.userID == userID }) else {
            return false
        }
        passkeys[index].name = name
        return true
    }

    func delete(_ credentialID: String, userID: UUID) async throws -> Bool {
        let before = passkeys.count
        passkeys.removeAll { $0.credentialID == credentialID && $0.userID == userID }
        return passkeys.count < before
    }

    func recordUse(
        _ credentialID: String, previousCount: Int, signCount: Int, backupEligible: Bool, backedUp: Bool, now: Date
    ) async throws -> Bool {
        guard let index = passkeys.firstIndex(where: { $0.credentialID == credentialID }),
            passkeys[index].signCount == previousCount
        else { return false }
        passkeys[index].signCount = signCount
        passkeys[index].backupEligible = backupEligible
        passkeys[index].backedUp = backedUp
        passkeys[index].lastUsedAt = now
        return true
    }

    func insertChallenge(_ challenge: PasskeyChallengeRecord) async throws {
        challenges[challenge.id] = challenge
        guard let userID = challenge.userID else { return }
        for (id, other) in challenges
        where id != challenge.id && other.userID == userID && other.purpose == challenge.purpose
            && other.flowID == challenge.flowID && other.usedAt == nil
        {
            challenges[id]?.usedAt = challenge.createdAt
        }
    }

    func challenge(_ challenge: String) async throws -> PasskeyChallengeRecord? {
        challenges.values.first { $0.challenge == challenge }
    }

    func claimChallenge(id: UUID, now: Date) async throws -> Bool { claim(&challenges, id: id, now: now) }
    func deleteChallenges(expiredBefore before: Date) async throws { deleteExpired(&challenges, before: before) }
}

/// A challenge a store uses up once, while it is alive.
protocol SingleUseChallenge: Sendable {
    var usedAt: Date? { get set }
    var expiresAt: Date { get }
}

extension DeviceChallengeRecord: SingleUseChallenge {}
extension PasskeyChallengeRecord: SingleUseChallenge {}

/// The claim the stores make with one conditional update: unused and alive at `now`.
func claim<Challenge: SingleUseChallenge>(_ challenges: inout [UUID: Challenge], id: UUID, now: Date) -> Bool {
    guard let challenge = challenges[id], challenge.usedAt == nil, challenge.expiresAt > now else { return false }
    challenges[id]?.usedAt = now
    return true
}

func deleteExpired<Challenge: SingleUseChallenge>(_ challenges: inout [UUID: Challenge], before: Date) {
    challenges = challenges.filter { $0.value.expiresAt > before }
}

actor InMemoryIdempotencyStore: IdempotencyStore {
    private var records: [String: IdempotentRequestRecord] = [:]

    func claim(_ record: IdempotentRequestRecord, now: Date, staleBefore: Date) async throws
        -> IdempotentRequestRecord?
    {
        if let held = records[record.keyHash], held.expiresAt > now, held.status != nil || held.createdAt > staleBefore
        {
            return held
        }
        records[record.keyHash] = record
        return nil
    }

    func complete(id: UUID, status: Int, contentType: String, bodyCiphertext: String) async throws {
        guard let key = records.first(where: { $0.value.id == id })?.key else { return }
        records[key]?.status = status
        records[key]?.contentType = contentType
        records[key]?.bodyCiphertext = bodyCiphertext
    }

    func release(id: UUID) async throws {
        records = records.filter { $0.value.id != id || $0.value.status != nil }
    }

    func deleteExpired(before: Date) async throws {
        records = records.filter { $0.value.expiresAt > before }
    }
}

actor InMemoryRecoveryStore: RecoveryStore {
    private var requests: [UUID: RecoveryRecord] = [:]
    private var documents: [UUID: RecoveryDocumentRecord] = [:]

    func insert(_ request: RecoveryRecord, document: RecoveryDocumentRecord?) async throws {
        requests[request.id] = request
        if let document { documents[request.id] = document }
    }

    func request(id: UUID) async throws -> RecoveryRecord? { requests[id] }

    func request(cancelTokenHash: String) async throws -> RecoveryRecord? {
        requests.values.first { $0.cancelTokenHash == cancelTokenHash }
    }

    func request(passHash: String) async throws -> RecoveryRecord? {
        requests.values.first { $0.passHash == passHash }
    }

    func addCodeFailure(id: UUID, maximum: Int) async throws -> Int? {
        guard var request = requests[id], request.state == .pendingEmail, request.codeFailures < maximum else {
            return nil
        }
        request.codeFailures += 1
        requests[id] = request
        return request.codeFailures
    }

    func proveEmail(id: UUID, now: Date, reviewUntil: Date, maximumFailures: Int) async throws -> Bool {
        guard var request = requests[id], request.state == .pendingEmail, request.userID != nil,
            request.codeFailures < maximumFailures, request.expiresAt > now
        else { return false }
        request.state = .pendingReview
        request.emailVerifiedAt = now
        request.expiresAt = reviewUntil
        requests[id] = request
        return true
    }

    func decide(
        id: UUID, approved: Bool, passHash: String?, usableFrom: Date?, expiresAt: Date, by admin: UUID,
        note: String, now: Date
    ) async throws -> Bool {
        guard var request = requests[id], request.state == .pendingReview, request.expiresAt > now else { return false }
        request.state = approved ? .approved : .denied
        request.passHash = passHash
        request.usableFrom = usableFrom
        request.expiresAt = expiresAt
        request.decidedAt = now
        request.decidedBy = admin
        request.note = note
        request.closedAt = approved ? nil : now
        requests[id] = request
        return true
    }

    func cancel(id: UUID, now: Date) async throws -> Bool {
        guard var request = requests[id], RecoveryRecord.openStates.contains(request.state), request.expiresAt > now
        else { return false }
        request.state = .cancelled
        request.closedAt = now
        requests[id] = request
        return true
    }

    func complete(passHash: String, now: Date) async throws -> (id: UUID, userID: UUID)? {
        guard
            var request = requests.values.first(where: {
                $0.passHash == passHash && $0.state == .approved && $0.expiresAt > now && ($0.usableFrom ?? now) <= now
            }), let userID = request.userID
        else { return nil }
        request.state = .completed
        request.closedAt = now
        requests[request.id] = request
        return (request.id, userID)
    }

    func disown(id: UUID, now: Date) async throws -> Bool {
        guard var request = requests[id], request.state == .completed, request.disownedAt == nil else { return false }
        request.disownedAt = now
        requests[id] = request
        return true
    }

    func disowned(userID: UUID) async throws -> Int {
        requests.values.filter { $0.userID == userID && $0.disownedAt != nil }.count
    }

    private var released: Set<UUID> = []

    func completed(userID: UUID, since: Date) async throws -> Bool {
        requests.values.contains {
            $0.userID == userID && $0.state == .completed && ($0.closedAt ?? .distantPast) > since
                && $0.disownedAt == nil && !released.contains($0.id)
        }
    }

    func release(userID: UUID, now: Date) async throws -> Int {
        let completed = requests.values.filter {
            $0.userID == userID && $0.state == .completed && !released.contains($0.id)
        }
        released.formUnion(completed.map(\.id))
        return completed.filter { $0.disownedAt != nil }.count
    }

    func releaseDisowned(userID: UUID, now: Date) async throws -> Int {
        let disowned = requests.values.filter {
            $0.userID == userID && $0.state == .completed && $0.disownedAt != nil && !released.contains($0.id)
        }
        released.formUnion(disowned.map(\.id))
        return disowned.count
    }

    func document(requestID: UUID) async throws -> RecoveryDocumentRecord? { documents[requestID] }

    func deleteDocument(requestID: UUID) async throws { documents[requestID] = nil }

    func list(states: [RecoveryState], now: Date, offset: Int, limit: Int) async throws
        -> [(RecoveryRecord, username: String, document: (type: String, bytes: Int)?)]
    {
        let wanted = requests.values.filter { states.contains($0.state) && $0.expiresAt > now && $0.userID != nil }
            .sorted { $0.createdAt < $1.createdAt }.dropFirst(offset).prefix(limit)
        return wanted.map { record in
            (record, "", documents[record.id].map { ($0.contentType, $0.bytes) })
        }
    }

    func deleteStaleDocuments(now: Date) async throws -> Int {
        let stale = documents.keys.filter { id in
            guard let request = requests[id] else { return true }
            return !(request.state == .pendingEmail || request.state == .pendingReview) || request.expiresAt <= now
        }
        for id in stale { documents[id] = nil }
        return stale.count
    }
}

actor InMemoryEmailLinkStore: EmailLinkStore {
    private var links: [UUID: EmailLinkRecord] = [:]

    func insert(_ link: EmailLinkRecord) async throws {
        try await endAll(userID: link.userID, purpose: link.purpose, now: link.createdAt)
        links[link.id] = link
    }
    func link(tokenHash: String) async throws -> EmailLinkRecord? { links.values.first { $0.tokenHash == tokenHash } }
    func claim(id: UUID, now: Date) async throws -> Bool {
        guard let link = links[id], link.usedAt == nil, link.expiresAt > now else { return false }
        links[id]?.usedAt = now
        return true
    }
    func release(id: UUID, claimedAt: Date) async throws {
        guard let link = links[id], link.usedAt == claimedAt,
            !links.values.contains(where: {
                $0.userID == link.userID && $0.purpose == link.purpose && $0.createdAt > link.createdAt
            })
        else { return }
        links[id]?.usedAt = nil
    }
    func endAll(userID: UUID, purpose: EmailLinkRecord.Purpose, now: Date) async throws {
        for (id, link) in links where link.userID == userID && link.purpose == purpose && link.usedAt == nil {
            links[id]?.usedAt = now
        }
    }
    func deleteExpired(before: Date) async throws {
        for (id, link) in links where link.expiresAt <= before { links[id] = nil }
    }
}

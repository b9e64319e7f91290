import Foundation
import Testing
import TwofoldAPI
import VaporTesting

@testable import TwofoldServer

/// Each store's in-memory twin keeps the SQL store's contract: the same calls, on both, give the
/// same answers (the SQL one on SQLite, and on PostgreSQL in `scripts/test`'s second run).
@Suite(.tags(.database)) struct StoreContractTests {
    /// `alice` and `bob` are users that exist (the tables' foreign keys need them).
    static func trustedDeviceContract(_ store: any TrustedDeviceStore, alice: UUID, bob: UUID) async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func device(_ user: UUID, _ name: String, created: TimeInterval, expires: TimeInterval) -> TrustedDeviceRecord {
            TrustedDeviceRecord(
                id: UUID(), userID: user, tokenHash: "hash-\(name)", name: name,
                createdAt: now.addingTimeInterval(created), expiresAt: now.addingTimeInterval(expires))
        }
        let older = device(alice, "older", created: -20, expires: 100)
        let newer = device(alice, "newer", created: -10, expires: 100)
        let expired = device(alice, "expired", created: -30, expires: -1)
        let bobs = device(bob, "bobs", created: -5, expires: 100)
        for record in [older, newer, expired, bobs] { try await store.insert(record) }

        #expect(try await store.live(userID: alice, now: now).map(\.name) == ["newer", "older"])
        #expect(try await store.markUsed(tokenHash: "hash-older", userID: alice, now: now))
        #expect(try await !store.markUsed(tokenHash: "hash-older", userID: bob, now: now))
        #expect(try await !store.markUsed(tokenHash: "hash-expired", userID: alice, now: now))
        #expect(try await store.live(userID: alice, now: now).last?.lastUsedAt == now)
        #expect(try await store.revoke(id: older.id, userID: bob, now: now) == nil)
        #expect(try await store.revoke(id: older.id, userID: alice, now: now) == "older")
        #expect(try await store.revoke(id: older.id, userID: alice, now: now) == nil)
        #expect(try await !store.markUsed(tokenHash: "hash-older", userID: alice, now: now))
        #expect(try await store.revokeAll(userID: alice, now: now) == 2, "newer and the expired one")
        #expect(try await store.live(userID: alice, now: now).isEmpty)
        #expect(try await store.live(userID: bob, now: now).map(\.name) == ["bobs"])
    }

    @Test func trustedDevicesInMemory() async throws {
        try await Self.trustedDeviceContract(InMemoryTrustedDeviceStore(), alice: UUID(), bob: UUID())
    }

    @Test func trustedDevicesInTheDatabase() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice").user.id
            let bob = try await Accounts.signUp(app, "bob", address: "10.0.0.2").user.id
            try await Self.trustedDeviceContract(
                SQLTrustedDeviceStore(database: app.twofold.database), alice: alice, bob: bob)
        }
    }

    static func rateLimitContract(_ store: any RateLimitStore) async throws {
        var now = Date(timeIntervalSince1970: 1_800_000_000)
        for _ in 0..<3 { #expect(try await store.take("k", capacity: 3, perSecond: 0.5, now: now)) }
        #expect(try await !store.take("k", capacity: 3, perSecond: 0.5, now: now), "the bucket is empty")
        #expect(try await store.tokens("k") == 0)
        now.addTimeInterval(1)
        #expect(try await !store.take("k", capacity: 3, perSecond: 0.5, now: now), "half a token after a second")
        now.addTimeInterval(1)
        #expect(try await store.take("k", capacity: 3, perSecond: 0.5, now: now), "a whole one after two")
        #expect(
            try await !store.take("k", capacity: 3, perSecond: 0.5, now: now.addingTimeInterval(-10)),
            "a clock behind refills nothing")
        now.addTimeInterval(3600)
        for _ in 0..<3 { #expect(try await store.take("k", capacity: 3, perSecond: 0.5, now: now)) }
        #expect(try await !store.take("k", capacity: 3, perSecond: 0.5, now: now), "refilled to its capacity, no more")
        try await store.refill("k", capacity: 3, now: now)
        #expect(try await store.tokens("k") == 3)
        try await store.refill("other", capacity: 3, now: now)
        #expect(try await store.tokens("other") == 0, "refilling a bucket that does not exist makes none")
        #expect(try await store.take("other", capacity: 1, perSecond: 1, now: now))
        try await store.deleteIdle(before: now.addingTimeInterval(1))
        #expect(try await store.tokens("k") == 0, "idle buckets deleted")
        #expect(try await store.tokens("other") == 0)
    }

    @Test func rateLimitsInMemory() async throws {
        try await Self.rateLimitContract(InMemoryRateLimitStore())
    }

    @Test func rateLimitsInTheDatabase() async throws {
        try await withTestApp { app in
            try await Self.rateLimitContract(SQLRateLimitStore(database: app.twofold.database))
        }
    }

    /// Parallel takes from one bucket never take more than it holds.
    @Test func parallelTakesHoldTheLimit() async throws {
        try await withTestApp { app in
            let store = SQLRateLimitStore(database: app.twofold.database)
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let taken = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<40 {
                    group.addTask { try await store.take("p", capacity: 10, perSecond: 0.001, now: now) }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(taken == 10)
        }
    }

    static func sessionContract(_ store: any SessionStore, alice: UUID, bob: UUID) async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func session(_ user: UUID, used: TimeInterval) -> SessionRecord {
            SessionRecord(
                id: UUID(), userID: user, authTime: now, methods: ["pwd", "otp", "mfa"], createdAt: now,
                lastUsedAt: now.addingTimeInterval(used), ipAddress: "10.0.0.1", userAgent: nil,
                proofs: [.password: now, Proof(method: .totp, version: "secret-1"): now])
        }
        func token(_ session: SessionRecord, _ name: String, expires: TimeInterval = 3600) -> RefreshTokenRecord {
            RefreshTokenRecord(
                id: UUID(), sessionID: session.id, tokenHash: "hash-\(name)", createdAt: now,
                expiresAt: now.addingTimeInterval(expires))
        }
        let first = session(alice, used: 0)
        let second = session(alice, used: 10)
        let bobs = session(bob, used: 5)
        try await store.insert(first, firstRefreshToken: token(first, "a1"))
        try await store.insert(second, firstRefreshToken: token(second, "b1", expires: -1))
        try await store.insert(bobs, firstRefreshToken: token(bobs, "c1"))

        #expect(try await store.session(id: first.id) == first)
        #expect(try await store.liveSessions(userID: alice).map(\.id) == [second.id, first.id])
        #expect(try await store.useRefreshToken(hash: "hash-a1", now: now) == first.id)
        #expect(try await store.useRefreshToken(hash: "hash-a1", now: now) == nil, "used once")
        #expect(try await store.refreshToken(hash: "hash-a1")?.usedAt == now)
        #expect(try await store.useRefreshToken(hash: "hash-b1", now: now) == nil, "expired")
        try await store.deleteExpiredRefreshTokens(now: now)
        #expect(try await store.refreshToken(hash: "hash-b1") == nil)
        #expect(try await store.refreshToken(hash: "hash-a1") != nil)
        #expect(try await store.useRefreshToken(hash: "hash-none", now: now) == nil)
        try await store.insert(token(first, "a2"))
        try await store.touch(sessionID: first.id, now: now.addingTimeInterval(20))
        #expect(try await store.liveSessions(userID: alice).first?.id == first.id)

        #expect(
            try await store.stepUp(
                sessionID: first.id, methods: ["pwd", "hwk", "mfa"],
                proofs: [.password: now, Proof.deviceKey("iphone", publicKey: "key"): now.addingTimeInterval(30)],
                now: now.addingTimeInterval(30)))
        #expect(
            try await store.session(id: second.id)?.proofs == [
                .password: now, Proof(method: .totp, version: "secret-1"): now,
            ])
        let stepped = try await store.session(id: first.id)
        #expect(stepped?.methods == ["pwd", "hwk", "mfa"] && stepped?.authTime == now.addingTimeInterval(30))
        #expect(
            stepped?.proofs == [
                .password: now, Proof.deviceKey("iphone", publicKey: "key"): now.addingTimeInterval(30),
            ])

        try await store.recordAdded(["totp", "deviceKey:iphone"], sessionID: first.id)
        try await store.recordAdded(["sms"], sessionID: first.id)
        #expect(try await store.addedFactors(sessionID: first.id) == ["totp", "deviceKey:iphone", "sms"])
        #expect(try await store.session(id: first.id)?.addedFactors == ["totp", "deviceKey:iphone", "sms"])
        #expect(try await store.addedFactors(sessionID: second.id).isEmpty)

        #expect(try await store.revoke(sessionID: first.id, reason: "logout", now: now))
        #expect(try await !store.revoke(sessionID: first.id, reason: "logout", now: now), "once")
        #expect(try await store.useRefreshToken(hash: "hash-a2", now: now) == nil, "a revoked session's token")
        #expect(try await !store.stepUp(sessionID: first.id, methods: ["pwd"], proofs: [:], now: now))
        try await store.insert(session(alice, used: 1), firstRefreshToken: token(first, "x"))
        #expect(try await store.revokeAll(userID: alice, except: second.id, reason: "password changed", now: now) == 1)
        #expect(try await store.revokeAll(userID: alice, except: nil, reason: "locked", now: now) == 1)
        #expect(try await store.liveSessions(userID: alice).isEmpty)
        #expect(try await store.liveSessions(userID: bob).map(\.id) == [bobs.id])
    }

    @Test func sessionsInMemory() async throws {
        try await Self.sessionContract(InMemorySessionStore(), alice: UUID(), bob: UUID())
    }

    @Test func sessionsInTheDatabase() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice").user.id
            let bob = try await Accounts.signUp(app, "bob", address: "10.0.0.2").user.id
            let store = SQLSessionStore(database: app.twofold.database)
            // Signing up signed them in: those sessions end first, one by one (an end of every
            // session would supersede the contract's sessions, made at epoch 0), so it starts empty.
            for user in [alice, bob] {
                for session in try await store.liveSessions(userID: user) {
                    _ = try await store.revoke(sessionID: session.id, reason: "test", now: Date())
                }
            }
            try await Self.sessionContract(store, alice: alice, bob: bob)
        }
    }

    static func factorGuardContract(_ store: any FactorGuardStore, alice: UUID) async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try await store.state(userID: alice, factor: "totp") == nil)
        for _ in 0..<3 { #expect(try await store.takeSlot(userID: alice, factor: "totp", limit: 3, now: now)) }
        #expect(try await !store.takeSlot(userID: alice, factor: "totp", limit: 3, now: now), "no slot left")
        #expect(try await store.takeSlot(userID: alice, factor: "sms", limit: 3, now: now), "another factor")
        #expect(try await !store.lock(userID: alice, factor: "sms", until: now, limit: 3), "one attempt is not three")
        #expect(try await store.lock(userID: alice, factor: "totp", until: now.addingTimeInterval(60), limit: 3))
        #expect(try await !store.lock(userID: alice, factor: "totp", until: now.addingTimeInterval(60), limit: 3))
        #expect(
            try await store.state(userID: alice, factor: "totp")
                == FactorGuardState(attempts: 3, lockouts: 1, lockedUntil: now.addingTimeInterval(60)))
        #expect(try await !store.takeSlot(userID: alice, factor: "totp", limit: 3, now: now.addingTimeInterval(59)))
        #expect(try await store.takeSlot(userID: alice, factor: "totp", limit: 3, now: now.addingTimeInterval(60)))
        #expect(
            try await store.state(userID: alice, factor: "totp")
                == FactorGuardState(attempts: 1, lockouts: 1, lockedUntil: nil), "the lock ran out: counting again")
        for offset in [-100.0, -10, 0] {
            try await store.recordFailure(
                id: UUID(), userID: alice, factor: "totp", at: now.addingTimeInterval(offset))
        }
        #expect(
            try await store.tally(userID: alice, factor: "totp", since: now.addingTimeInterval(-50))
                == FactorTally(failures: 2, attempts: 1, lockouts: 1))
        #expect(
            try await store.tally(userID: alice, factor: "email", since: now.addingTimeInterval(-50))
                == FactorTally(failures: 2, attempts: nil, lockouts: nil))
        try await store.deleteFailures(before: now.addingTimeInterval(-50))
        #expect(try await store.tally(userID: alice, factor: "totp", since: .distantPast).failures == 2)
        try await store.clear(userID: alice, factor: "totp")
        #expect(try await store.state(userID: alice, factor: "totp") == FactorGuardState(attempts: 0, lockouts: 0))
        try await store.clearAll(userID: alice)
        #expect(try await store.tally(userID: alice, factor: "sms", since: .distantPast).failures == 0)
        #expect(try await store.state(userID: alice, factor: "sms")?.attempts == 0)
    }

    @Test func factorGuardsInMemory() async throws {
        try await Self.factorGuardContract(InMemoryFactorGuardStore(), alice: UUID())
    }

    @Test func factorGuardsInTheDatabase() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice").user.id
            try await Self.factorGuardContract(SQLFactorGuardStore(database: app.twofold.database), alice: alice)
        }
    }

    /// `lock` locks `alice`'s account (in the database, or in the in-memory twin).
    static func loginFlowContract(
        _ store: any LoginFlowStore, alice: UUID, lock: @Sendable () async throws -> Void
    ) async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func flow(_ name: String, expires: TimeInterval = 300) -> LoginFlowRecord {
            LoginFlowRecord(
                id: UUID(), tokenHash: "hash-\(name)", userID: alice, firstFactor: "pwd", createdAt: now,
                expiresAt: now.addingTimeInterval(expires), ipAddress: "10.0.0.1")
        }
        let first = flow("first")
        try await store.insert(first)
        try await store.insert([flow("second"), flow("old", expires: -1), flow("third")])
        #expect(try await store.flow(tokenHash: "hash-first") == first)
        #expect(try await store.flow(tokenHash: "hash-none") == nil)
        let pending = try #require(try await store.pending(tokenHash: "hash-first"))
        #expect(pending.flowID == first.id && pending.user.id == alice && pending.userStatus == .active)
        #expect(pending.totp == nil && pending.firstFactor == "pwd" && pending.consumedAt == nil)

        #expect(try await store.consume(flowID: first.id, now: now))
        #expect(try await !store.consume(flowID: first.id, now: now), "consumed once")
        try await store.release(flowID: first.id, claimedAt: now.addingTimeInterval(1))
        #expect(try await !store.consume(flowID: first.id, now: now), "another claim's time gives nothing back")
        try await store.release(flowID: first.id, claimedAt: now)
        #expect(try await store.consume(flowID: first.id, now: now), "given back, claimed again")
        let old = try #require(try await store.flow(tokenHash: "hash-old"))
        #expect(try await !store.consume(flowID: old.id, now: now), "expired")
        try await store.deleteExpired(before: now)
        #expect(try await store.flow(tokenHash: "hash-old") == nil)
        #expect(try await store.flow(tokenHash: "hash-first") != nil)
        try await lock()
        let second = try #require(try await store.flow(tokenHash: "hash-second"))
        #expect(try await !store.consume(flowID: second.id, now: now), "the user is locked")
    }

    @Test func loginFlowsInMemory() async throws {
        let store = InMemoryLoginFlowStore()
        let alice = UUID()
        await store.addUser(
            UserDTO(
                id: alice, username: "alice", email: "a@example.com", phoneNumber: nil, role: "user", status: "active",
                createdAt: Date()))
        try await Self.loginFlowContract(store, alice: alice) { await store.setStatus(.locked, of: alice) }
    }

    @Test func loginFlowsInTheDatabase() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice").user.id
            let users = SQLUserStore(database: app.twofold.database)
            try await Self.loginFlowContract(SQLLoginFlowStore(database: app.twofold.database), alice: alice) {
                _ = try await users.lock(userID: alice, now: Date())
            }
        }
    }

    static func totpContract(_ store: any TOTPCredentialStore, alice: UUID, bob: UUID) async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func pending(_ user: UUID) -> TOTPCredentialRecord {
            TOTPCredentialRecord(
                id: UUID(), userID: user, status: .pending, secretCiphertext: "sealed-\(user)", createdAt: now,
                expiresAt: now.addingTimeInterval(600))
        }
        let first = pending(alice)
        try await store.replace(with: first)
        #expect(try await store.credential(userID: alice, status: .pending) == first)
        #expect(try await store.credential(userID: alice, status: .active) == nil)
        let second = pending(alice)
        try await store.replace(with: second)
        #expect(try await store.credential(userID: alice, status: .pending)?.id == second.id, "replaced")
        #expect(try await store.activate(credentialID: second.id, now: now, addedBy: nil))
        #expect(try await !store.activate(credentialID: second.id, now: now, addedBy: nil), "once")
        let active = try #require(try await store.credential(userID: alice, status: .active))
        #expect(active.confirmedAt == now && active.lastUsedStep == nil && active.digits == 6 && active.period == 30)
        #expect(try await store.claimStep(100, credentialID: second.id))
        #expect(try await !store.claimStep(100, credentialID: second.id), "a step once")
        #expect(try await !store.claimStep(99, credentialID: second.id), "never an earlier one")
        #expect(try await store.claimStep(101, credentialID: second.id))
        #expect(try await store.credential(userID: alice, status: .active)?.lastUsedStep == 101)
        try await store.insert([pending(bob)])
        #expect(try await store.deleteAll(userID: alice) == 1)
        #expect(try await store.credential(userID: alice, status: .active) == nil)
        #expect(try await store.credential(userID: bob, status: .pending) != nil)
        try await store.deleteExpiredPending(now: now.addingTimeInterval(600))
        #expect(try await store.credential(userID: bob, status: .pending) == nil, "an unconfirmed setup expires")
    }

    @Test func totpCredentialsInMemory() async throws {
        try await Self.totpContract(InMemoryTOTPCredentialStore(), alice: UUID(), bob: UUID())
    }

    @Test func totpCredentialsInTheDatabase() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice").user.id
            let bob = try await Accounts.signUp(app, "bob", address: "10.0.0.2").user.id
            try await Self.totpContract(SQLTOTPCredentialStore(database: app.twofold.database), alice: alice, bob: bob)
        }
    }

    static func backupCodeContract(_ store: any BackupCodeStore, alice: UUID, bob: UUID) async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func codes(_ user: UUID, _ prefix: String, at time: Date) -> [BackupCodeRecord] {
            (0..<3).map {
                BackupCodeRecord(
                    id: UUID(), userID: user, lookup: "\(prefix)\($0)", codeHash: "hash", createdAt: time)
            }
        }
        #expect(try await store.summary(userID: alice) == BackupCodeSummary(unused: 0, total: 0, generatedAt: nil))
        let first = codes(alice, "a", at: now)
        try await store.replace(userID: alice, with: first, addedBy: nil)
        try await store.replace(userID: bob, with: codes(bob, "a", at: now), addedBy: nil)
        #expect(try await store.code(userID: alice, lookup: "a1")?.id == first[1].id)
        #expect(try await store.use(id: first[1].id, now: now))
        #expect(try await !store.use(id: first[1].id, now: now), "once")
        #expect(try await store.code(userID: alice, lookup: "a1")?.usedAt == now)
        #expect(try await store.summary(userID: alice) == BackupCodeSummary(unused: 2, total: 3, generatedAt: now))
        let later = now.addingTimeInterval(60)
        try await store.replace(userID: alice, with: codes(alice, "b", at: later), addedBy: nil)
        #expect(try await store.code(userID: alice, lookup: "a0") == nil, "the old set is gone")
        #expect(try await store.summary(userID: alice) == BackupCodeSummary(unused: 3, total: 3, generatedAt: later))
        #expect(try await store.summary(userID: bob).unused == 3, "another user's set stays")
        try await store.deleteAll(userID: alice)
        #expect(try await store.summary(userID: alice).total == 0)
    }

    @Test func backupCodesInMemory() async throws {
        try await Self.backupCodeContract(InMemoryBackupCodeStore(), alice: UUID(), bob: UUID())
    }

    @Test func backupCodesInTheDatabase() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice").user.id
            let bob = try await Accounts.signUp(app, "bob", address: "10.0.0.2").user.id
            try await Self.backupCodeContract(
                SQLBackupCodeStore(database: app.twofold.database), alice: alice, bob: bob)
        }
    }

    static func outboxContract(_ store: any OutboxStore) async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func message(_ due: TimeInterval) -> OutboxRecord {
            OutboxRecord(
                id: UUID(), channel: .sms, destinationCiphertext: "to", subject: "", bodyCiphertext: "body",
                nextAttemptAt: now.addingTimeInterval(due), createdAt: now)
        }
        let (early, later, future) = (message(-20), message(-10), message(60))
        for record in [later, future, early] { try await store.insert(record) }
        let lease = now.addingTimeInterval(60)
        #expect(try await store.claimDue(now: now, leaseUntil: lease, limit: 1) == [early.id], "the earliest first")
        #expect(try await store.claimDue(now: now, leaseUntil: lease, limit: 10) == [later.id])
        #expect(try await store.claimDue(now: now, leaseUntil: lease, limit: 10).isEmpty, "leased")
        let claimed = try #require(try await store.message(id: early.id))
        #expect(claimed.status == .sending && claimed.attempts == 1 && claimed.nextAttemptAt == lease)
        try await store.markSent(id: early.id, now: now)
        let sent = try #require(try await store.message(id: early.id))
        #expect(sent.status == .sent && sent.bodyCiphertext.isEmpty && sent.sentAt == now)
        try await store.markUndelivered(id: later.id, error: "outage", retryAt: now.addingTimeInterval(2))
        #expect(try await store.message(id: later.id)?.status == .pending)
        #expect(
            try await store.claimDue(now: lease, leaseUntil: lease.addingTimeInterval(60), limit: 10).sorted {
                $0.uuidString < $1.uuidString
            } == [later.id, future.id].sorted { $0.uuidString < $1.uuidString }, "a lease run out, a retry due")
        try await store.markUndelivered(id: later.id, error: "gave up", retryAt: nil)
        let failed = try #require(try await store.message(id: later.id))
        #expect(failed.status == .failed && failed.bodyCiphertext.isEmpty && failed.lastError == "gave up")
    }

    @Test func outboxInMemory() async throws { try await Self.outboxContract(InMemoryOutboxStore()) }

    @Test func outboxInTheDatabase() async throws {
        try await withTestApp { app in try await Self.outboxContract(SQLOutboxStore(database: app.twofold.database)) }
    }

    static func oneTimeCodeContract(_ store: any OneTimeCodeStore, alice: UUID) async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let flow = UUID()
        func code(_ purpose: OneTimeCodeRecord.Purpose, flow: UUID? = nil, created: TimeInterval = 0)
            -> OneTimeCodeRecord
        {
            OneTimeCodeRecord(
                id: UUID(), userID: alice, channel: .sms, purpose: purpose, flowID: flow, destinationCiphertext: "d",
                codeHash: "h", createdAt: now.addingTimeInterval(created), expiresAt: now.addingTimeInterval(300))
        }
        let first = code(.login, flow: flow, created: -10)
        let second = code(.login, flow: flow)
        try await store.insert(first)
        try await store.insert(second)
        #expect(
            try await store.live(
                userID: alice, channel: .sms, purpose: .login, flowID: flow, now: now, maximumFailures: 5)?.id
                == second.id)
        #expect(
            try await store.live(
                userID: alice, channel: .sms, purpose: .login, flowID: UUID(), now: now, maximumFailures: 5) == nil)
        #expect(
            try await store.live(
                userID: alice, channel: .email, purpose: .login, flowID: nil, now: now, maximumFailures: 5) == nil)
        #expect(try await store.latest(flowID: flow)?.id == second.id)
        for _ in 0..<2 { try await store.addFailure(id: second.id) }
        #expect(try await !store.use(id: second.id, now: now, maximumFailures: 2), "too many wrong tries")
        #expect(
            try await store.live(
                userID: alice, channel: .sms, purpose: .login, flowID: flow, now: now, maximumFailures: 2)?.id
                == first.id)
        #expect(try await store.use(id: first.id, now: now, maximumFailures: 5))
        #expect(try await !store.use(id: first.id, now: now, maximumFailures: 5), "once")
        let stepUp = code(.stepUp)
        try await store.insert(stepUp)
        try await store.supersede(userID: alice, channel: .sms, purpose: .stepUp, flowID: nil, now: now)
        #expect(
            try await store.live(
                userID: alice, channel: .sms, purpose: .stepUp, flowID: nil, now: now, maximumFailures: 5) == nil)
        #expect(
            try await store.live(
                userID: alice, channel: .sms, purpose: .login, flowID: nil, now: now, maximumFailures: 5)?.id
                == second.id, "another purpose stays")
        #expect(
            try await store.live(
                userID: alice, channel: .sms, purpose: .login, flowID: nil, now: now.addingTimeInterval(300),
                maximumFailures: 5) == nil, "expired")
    }

    @Test func oneTimeCodesInMemory() async throws {
        try await Self.oneTimeCodeContract(InMemoryOneTimeCodeStore(), alice: UUID())
    }

    @Test func oneTimeCodesInTheDatabase() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice").user.id
            try await Self.oneTimeCodeContract(SQLOneTimeCodeStore(database: app.twofold.database), alice: alice)
        }
    }

    static func auditContract(_ store: any AuditStore, alice: UUID) async throws {
        // Later than anything the test app wrote (its clock starts at 1,800,000,000).
        let now = Date(timeIntervalSince1970: 1_900_000_000)
        let events: [(AuditEvent, UUID?, TimeInterval)] = [
            (.loginFailed, nil, 0), (.loginSucceeded, alice, 1), (.loginFailed, alice, 2), (.lockout, alice, 3),
        ]
        for (event, user, offset) in events {
            try await store.append(
                AuditEntry(
                    id: UUID(), occurredAt: now.addingTimeInterval(offset), event: event, userID: user, actorID: nil,
                    origin: RequestOrigin(address: "10.0.0.1", userAgent: "ua"), detail: "d\(Int(offset))"))
        }
        let mine = try await store.events(userID: alice, type: nil, from: nil, to: nil, offset: 0, limit: 10).filter {
            $0.occurredAt >= now
        }
        #expect(mine.map(\.detail) == ["d3", "d2", "d1"], "newest first")
        #expect(mine.first?.ipAddress == "10.0.0.1" && mine.first?.userAgent == "ua")
        let failed = try await store.events(userID: nil, type: "login.failed", from: nil, to: nil, offset: 0, limit: 10)
            .filter {
                $0.occurredAt >= now
            }
        #expect(failed.map(\.detail) == ["d2", "d0"])
        #expect(
            try await store.events(userID: alice, type: nil, from: nil, to: nil, offset: 1, limit: 1).first?.detail
                == "d2")
    }

    @Test func auditInMemory() async throws { try await Self.auditContract(InMemoryAuditStore(), alice: UUID()) }

    @Test func auditInTheDatabase() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice").user.id
            try await Self.auditContract(SQLAuditStore(database: app.twofold.database), alice: alice)
        }
    }

    /// The stored factors a user has, as every second step reads them.
    @Test func storedFactorsInTheDatabase() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app, "alice")
            let users = SQLUserStore(database: app.twofold.database)
            #expect(
                try await users.storedFactors(userID: tokens.user.id)
                    == StoredFactors())
            _ = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let secret = try #require(try await app.twofold.totp.active(for: tokens.user.id)).id
            #expect(
                try await users.storedFactors(userID: tokens.user.id)
                    == StoredFactors(totp: secret, unusedBackupCodes: 10))
        }
    }
}

import Crypto
import Foundation
import NIOPosix
import TwofoldAPI
import TwofoldCore
import Vapor

/// Backup codes (seed 000, seed 002): 10 single-use `XXXX-XXXX` codes. Each is stored as an HMAC
/// lookup value (keyed with a key outside the database) and a bcrypt hash; a code is found by its
/// lookup, checked against its hash in constant time, and claimed by a conditional update.
/// Built with what it uses and given values, never a request.
struct BackupCodeService: Sendable {
    static let factor = FactorMethod.backup.rawValue
    static let hashCost = 8
    /// Checked when no code matches, so a miss takes as long as a hit.
    static let dummyHash = (try? Bcrypt.hash("no such backup code", cost: hashCost)) ?? ""

    let store: any BackupCodeStore
    let guards: FactorGuard
    let secrets: SecretBox
    /// Where bcrypt runs (the password hasher's threads, off the event loops).
    let hashing: NIOThreadPool
    let clock: ServerClock

    /// Replaces the user's codes with a fresh set and returns them (shown once); written only
    /// while `addedBy` (the session asking) is live.
    func regenerate(for userID: UUID, addedBy: AddingSession?) async throws -> [String] {
        let codes = BackupCodes.generate()
        let now = clock.now()
        var rows: [BackupCodeRecord] = []
        for code in codes {
            guard let normalized = BackupCodes.normalize(code) else {
                throw Abort(.internalServerError, reason: "a generated backup code did not normalise")
            }
            let hash = try await hashing.runIfActive { try Bcrypt.hash(normalized, cost: Self.hashCost) }
            rows.append(
                BackupCodeRecord(
                    id: SecureRandom.timeOrderedUUID(at: now), userID: userID, lookup: lookup(normalized),
                    codeHash: hash, createdAt: now))
        }
        try await store.replace(userID: userID, with: rows, addedBy: addedBy)
        return codes
    }

    func summary(for userID: UUID) async throws -> BackupCodeSummary { try await store.summary(userID: userID) }
    func remaining(for userID: UUID) async throws -> Int { try await store.summary(userID: userID).unused }
    func exist(for userID: UUID) async throws -> Bool { try await store.summary(userID: userID).total > 0 }
    func deleteAll(for userID: UUID) async throws { try await store.deleteAll(userID: userID) }

    /// How long a used code is told apart from a wrong one: a client that sent it twice (a
    /// retry, a double tap, two tabs) is told `409 already_used`, not counted as guessing.
    static let duplicateWindow: TimeInterval = 120

    /// Checks and uses up one code under the factor guard; returns how many remain.
    /// `waiting`: a step-up's, which waits for parallel checks rather than reading their slots as
    /// a lock (`FactorGuard.begin`).
    func use(_ input: String, userID: UUID, waiting: Bool = false, origin: RequestOrigin) async throws -> Int {
        _ = try InputValidation.code(input, for: .backup)  // a malformed one costs no slot
        try await guards.begin(Self.factor, userID: userID, waiting: waiting)
        let normalized = BackupCodes.normalize(input)
        let row = try await normalized.asyncMap { try await store.code(userID: userID, lookup: lookup($0)) } ?? nil
        // Always one bcrypt check, so a miss costs the same time as a hit.
        let hash = row?.codeHash ?? Self.dummyHash
        let candidate = normalized ?? "-"
        let matches = try await hashing.runIfActive { try Bcrypt.verify(candidate, created: hash) }
        guard matches, let row else { try await guards.failed(Self.factor, userID: userID, origin: origin) }
        let now = clock.now()
        if let usedAt = row.usedAt {
            // The right code, used before: a duplicate of a use just made is not a guess (issue T);
            // an old one is as wrong as any.
            // It gives its slot back and records no failure: it guessed nothing, and a slot kept
            // would close the factor with no lock to end (issue V item 9).
            guard now.timeIntervalSince(usedAt) <= Self.duplicateWindow else {
                try await guards.failed(Self.factor, userID: userID, origin: origin)
            }
            try await guards.giveBack(Self.factor, userID: userID)
            throw Self.alreadyUsed
        }
        // Used by a parallel request between the read and the claim: the same duplicate.
        guard try await store.use(id: row.id, now: now) else {
            try await guards.giveBack(Self.factor, userID: userID)
            throw Self.alreadyUsed
        }
        try await guards.succeeded(Self.factor, userID: userID)
        return try await remaining(for: userID)
    }

    static let alreadyUsed = Problem(
        status: 409, code: .alreadyUsed, title: "Backup code already used",
        detail: "This backup code was used a moment ago; each works once. Use another one.")

    private func lookup(_ normalized: String) -> String {
        let key = secrets.lookupKey(purpose: "backup codes")
        return Base64URL.encode(Data(HMAC<SHA256>.authenticationCode(for: Data(normalized.utf8), using: key)))
    }
}

extension Optional {
    /// `map` with an asynchronous transform.
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}

import Crypto
import Fluent
import Foundation
import SQLKit
import TwofoldAPI
import TwofoldCore
import Vapor

/// Backup codes (seed 000, seed 002): 10 single-use `XXXX-XXXX` codes. Each is stored as an HMAC
/// lookup value (keyed with a key outside the database) and a bcrypt hash; a code is found by its
/// lookup, checked against its hash in constant time, and claimed by a conditional update.
enum BackupCodeService {
    static let factor = "backup"
    static let hashCost = 8
    /// Checked when no code matches, so a miss takes as long as a hit.
    static let dummyHash = (try? Bcrypt.hash("no such backup code", cost: hashCost)) ?? ""

    /// Replaces the user's codes with a fresh set and returns them (shown once).
    static func regenerate(for userID: UUID, request: Request) async throws -> [String] {
        let codes = BackupCodes.generate()
        let now = request.twofold.clock.now()
        var rows: [BackupCode] = []
        for code in codes {
            let normalized = BackupCodes.normalize(code)!
            let hash = try await request.twofold.passwords.threadPool.runIfActive {
                try Bcrypt.hash(normalized, cost: hashCost)
            }
            rows.append(
                BackupCode(userID: userID, lookup: lookup(normalized, request: request), codeHash: hash, now: now))
        }
        let fresh = rows
        try await request.db.transaction { database in
            try await BackupCode.query(on: database).filter(\.$userID == userID).delete()
            for row in fresh { try await row.create(on: database) }
        }
        return codes
    }

    static func remaining(for userID: UUID, on database: any Database) async throws -> Int {
        try await BackupCode.query(on: database).filter(\.$userID == userID).filter(\.$usedAt == nil).count()
    }

    static func exist(for userID: UUID, on database: any Database) async throws -> Bool {
        try await BackupCode.query(on: database).filter(\.$userID == userID).count() > 0
    }

    /// Checks and uses up one code under the factor guard; returns how many remain.
    static func use(_ input: String, userID: UUID, request: Request) async throws -> Int {
        try await request.twofold.guards.begin(factor, userID: userID)
        let normalized = BackupCodes.normalize(input)
        let row: BackupCode? =
            if let normalized {
                try await BackupCode.query(on: request.db).filter(\.$userID == userID)
                    .filter(\.$lookup == lookup(normalized, request: request)).filter(\.$usedAt == nil).first()
            } else { nil }
        // Always one bcrypt check, so a miss costs the same time as a hit.
        let hash = row?.codeHash ?? dummyHash
        let candidate = normalized ?? "-"
        let matches = try await request.twofold.passwords.threadPool.runIfActive {
            try Bcrypt.verify(candidate, created: hash)
        }
        guard matches, let row else {
            try await request.twofold.guards.failed(factor, userID: userID, origin: request.origin)
        }
        let claimed = try await request.sql.raw(
            """
            UPDATE backup_codes SET used_at = \(bind: request.twofold.clock.now())
            WHERE id = \(bind: try row.requireID()) AND used_at IS NULL RETURNING id
            """
        ).all()
        guard !claimed.isEmpty else {
            try await request.twofold.guards.failed(factor, userID: userID, origin: request.origin)
        }
        try await request.twofold.guards.succeeded(factor, userID: userID)
        return try await remaining(for: userID, on: request.db)
    }

    private static func lookup(_ normalized: String, request: Request) -> String {
        let key = request.twofold.secrets.lookupKey(purpose: "backup codes")
        return Data(HMAC<SHA256>.authenticationCode(for: Data(normalized.utf8), using: key)).base64URLEncodedString()
    }
}

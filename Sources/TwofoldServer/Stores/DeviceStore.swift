import Foundation
import TwofoldAPI
import TwofoldSQLite

/// A phone enrolled for seed 004's device-bound sign-in (`devices`): a Secure Enclave P-256 key
/// (`secureEnclave`) or SMS codes to the account's phone (`smsOTP`). Seed 001's device second
/// factor lives here too: a PIN (a slow salted hash; blocked after 3 wrong in a row) and a
/// biometric-protected key.
struct DeviceRecord: Sendable, Equatable {
    enum Method: String, Sendable {
        case secureEnclave
        case smsOTP
    }

    var id: UUID
    var userID: UUID
    /// The app's own identifier for the device (seed 004's `deviceId`), unique per user.
    var deviceID: String
    var deviceModel: String?
    var method: Method
    /// base64 of the uncompressed X9.63 point; `nil` for an SMS device.
    var publicKey: String?
    var enrolledAt: Date
    var updatedAt: Date
    var lastUsedAt: Date?
    /// Seed 001: the device PIN as a slow salted hash, its wrong-in-a-row count, and whether it
    /// is blocked.
    var pinHash: String?
    var pinFailures = 0
    var pinBlocked = false
    /// Seed 001: the biometric-protected key (base64 X9.63), dropped when the device reports its
    /// biometric set changed.
    var biometricKey: String?

    /// Whether the device holds a device key (what signs challenges and push approvals), rather
    /// than signing in with SMS codes.
    var holdsKey: Bool { method == .secureEnclave && publicKey != nil }

    var dto: DeviceDTO {
        DeviceDTO(
            deviceId: deviceID, deviceModel: deviceModel, method: method.rawValue, enrolledAt: enrolledAt,
            lastUsed: lastUsedAt)
    }
}

/// A challenge for a device key (`device_challenges`): 32 random bytes, used once. `purpose`
/// says what a good signature proves: a sign-in, the second step of a login flow, a step-up, or
/// (seed 001) the biometric key.
struct DeviceChallengeRecord: Sendable, Equatable {
    enum Purpose: String, Sendable {
        case signIn = "sign_in"
        case loginFlow = "login_flow"
        case stepUp = "step_up"
        case biometric
    }

    var id: UUID
    /// The device's row (`DeviceRecord.id`), not the app's identifier.
    var deviceRowID: UUID
    var userID: UUID
    var purpose: Purpose
    var flowID: UUID?
    /// base64 of the 32 bytes to sign.
    var challenge: String
    var createdAt: Date
    var expiresAt: Date
    var usedAt: Date?
}

/// Enrolled devices, their PIN and biometric state, and their challenges. Every claim (a PIN
/// attempt, a challenge, a first PIN) is one conditional update.
protocol DeviceStore: Sendable {
    func device(id: UUID) async throws -> DeviceRecord?
    /// `userID`'s device with the app's identifier `deviceID`.
    func device(_ deviceID: String, userID: UUID) async throws -> DeviceRecord?
    /// Every device with the app's identifier `deviceID`, of any user.
    func devices(deviceID: String) async throws -> [DeviceRecord]
    /// The user's devices in the order they were enrolled.
    func devices(userID: UUID) async throws -> [DeviceRecord]
    /// Writes a new device, while `addedBy` is live (`AddingSession`; throws its `ended` when it
    /// is not); `false` when the user already has one with its `deviceID`.
    func insert(_ device: DeviceRecord, addedBy: AddingSession?) async throws -> Bool
    /// Sets the method, key and model (re-enrolment, upgrade, downgrade), and with `pinHash` a
    /// fresh PIN, while `addedBy` is live (throws `AddingSession.ended` when it is not); then
    /// retires every open challenge of the device, so an old key stops working at once.
    func changeKey(
        deviceRowID: UUID, method: DeviceRecord.Method, publicKey: String?, deviceModel: String?,
        enrolledAt: Date?, pinHash: String?, now: Date, addedBy: AddingSession?) async throws
    /// Sets (or with `nil` removes) the biometric key, then retires the open biometric challenges.
    func changeBiometricKey(_ key: String?, deviceRowID: UUID, now: Date) async throws
    /// Deletes devices (their challenges go with them); how many.
    @discardableResult
    func delete(deviceRowIDs: [UUID]) async throws -> Int
    func markUsed(deviceRowID: UUID, now: Date) async throws

    /// Sets the PIN's hash and clears its failures; with `onlyIfNone`, only while no PIN is
    /// set. Whether this call did.
    func setPIN(hash: String, deviceRowID: UUID, onlyIfNone: Bool, now: Date) async throws -> Bool
    /// Takes one PIN attempt while fewer than `maximum` failed in a row and the PIN is not
    /// blocked: the failure count with this attempt, or `nil` when none is left.
    func takePINAttempt(deviceRowID: UUID, maximum: Int) async throws -> Int?
    func clearPINFailures(deviceRowID: UUID) async throws
    /// Blocks the PIN; whether this call did.
    func blockPIN(deviceRowID: UUID) async throws -> Bool
    /// Unblocks a blocked PIN; whether this call did.
    func unblockPIN(deviceRowID: UUID) async throws -> Bool

    /// Writes a challenge and retires the device's other open challenges of the same purpose
    /// and login flow (one live challenge each, replaced rather than added; issue T) — except a
    /// sign-in's, which anyone with a username may ask for: replacing it would let them cancel
    /// the owner's sign-in.
    func insertChallenge(_ challenge: DeviceChallengeRecord) async throws
    func challenge(id: UUID) async throws -> DeviceChallengeRecord?
    /// Uses the challenge up if it is unused and alive at `now`; whether this call did.
    func claimChallenge(id: UUID, now: Date) async throws -> Bool
    /// Deletes challenges that expired by `before` (housekeeping).
    func deleteChallenges(expiredBefore before: Date) async throws
}

/// `DeviceStore` on the server's database.
struct SQLDeviceStore: DeviceStore {
    let database: any SQLExecutor

    private static let columns = """
        id, user_id, device_id, device_model, method, public_key, enrolled_at, updated_at, last_used_at, pin_hash, \
        pin_failures, pin_blocked, biometric_key
        """

    private static func device(_ row: StatementRow) throws -> DeviceRecord {
        guard let method = DeviceRecord.Method(rawValue: try row.text(4)) else {
            throw StatementRowError(column: 4, reason: "is not a device method")
        }
        return DeviceRecord(
            id: try row.uuid(0), userID: try row.uuid(1), deviceID: try row.text(2),
            deviceModel: try row.optionalText(3), method: method, publicKey: try row.optionalText(5),
            enrolledAt: try row.date(6), updatedAt: try row.date(7), lastUsedAt: try row.optionalDate(8),
            pinHash: try row.optionalText(9), pinFailures: try row.integer(10), pinBlocked: try row.bool(11),
            biometricKey: try row.optionalText(12))
    }

    private func devices(where condition: String, _ values: Statement.Value...) async throws -> [DeviceRecord] {
        try await database.rows(
            Statement("SELECT \(Self.columns) FROM devices WHERE \(condition)", values), Self.device)
    }

    func device(id: UUID) async throws -> DeviceRecord? {
        try await devices(where: "id = ?", .uuid(id)).first
    }

    func device(_ deviceID: String, userID: UUID) async throws -> DeviceRecord? {
        try await devices(where: "user_id = ? AND device_id = ?", .uuid(userID), .text(deviceID)).first
    }

    func devices(deviceID: String) async throws -> [DeviceRecord] {
        try await devices(where: "device_id = ? ORDER BY enrolled_at", .text(deviceID))
    }

    func devices(userID: UUID) async throws -> [DeviceRecord] {
        try await devices(where: "user_id = ? ORDER BY enrolled_at", .uuid(userID))
    }

    func insert(_ device: DeviceRecord, addedBy: AddingSession?) async throws -> Bool {
        // Booleans as literals: `pin_blocked` is 0/1 in SQLite and a boolean in PostgreSQL.
        let insert = Statement(
            """
            INSERT INTO devices (id, user_id, device_id, device_model, method, public_key, enrolled_at, updated_at,
              last_used_at, pin_hash, pin_failures, pin_blocked, biometric_key)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, \(device.pinBlocked ? "true" : "false"), ?)
            """, .uuid(device.id), .uuid(device.userID), .text(device.deviceID), .text(device.deviceModel),
            .text(device.method.rawValue), .text(device.publicKey), .date(device.enrolledAt),
            .date(device.updatedAt), .date(device.lastUsedAt), .text(device.pinHash),
            .integer(device.pinFailures), .text(device.biometricKey))
        return try await database.changes(inserting: insert, suffix: " ON CONFLICT DO NOTHING", whileLive: addedBy) > 0
    }

    func changeKey(
        deviceRowID: UUID, method: DeviceRecord.Method, publicKey: String?, deviceModel: String?,
        enrolledAt: Date?, pinHash: String?, now: Date, addedBy: AddingSession?
    ) async throws {
        // The device first, then its challenges: a check that read the old key and claims a
        // challenge after this point finds it used; stopped between the two, the old key no
        // longer verifies anyway (a check reads the key afresh).
        let update = Statement(
            """
            UPDATE devices SET method = ?, public_key = ?, device_model = COALESCE(?, device_model),
              enrolled_at = COALESCE(?, enrolled_at), updated_at = ?\(pinHash == nil
                ? "" : ", pin_hash = ?, pin_failures = 0, pin_blocked = false")
            WHERE id = ?
            """,
            [
                .text(method.rawValue), .text(publicKey), .text(deviceModel), .date(enrolledAt), .date(now),
            ] + (pinHash.map { [.text($0)] } ?? []) + [.uuid(deviceRowID)])
        _ = try await database.changes(update, whileLive: addedBy)
        try await retireChallenges(deviceRowID: deviceRowID, purpose: nil, now: now)
    }

    func changeBiometricKey(_ key: String?, deviceRowID: UUID, now: Date) async throws {
        try await database.run(
            Statement(
                "UPDATE devices SET biometric_key = ?, updated_at = ? WHERE id = ?", .text(key), .date(now),
                .uuid(deviceRowID)))
        try await retireChallenges(deviceRowID: deviceRowID, purpose: .biometric, now: now)
    }

    private func retireChallenges(
        deviceRowID: UUID, purpose: DeviceChallengeRecord.Purpose?, now: Date
    ) async throws {
        if let purpose {
            try await database.run(
                Statement(
                    "UPDATE device_challenges SET used_at = ? WHERE device_id = ? AND purpose = ? AND used_at IS NULL",
                    .date(now), .uuid(deviceRowID), .text(purpose.rawValue)))
        } else {
            try await database.run(
                Statement(
                    "UPDATE device_challenges SET used_at = ? WHERE device_id = ? AND used_at IS NULL", .date(now),
                    .uuid(deviceRowID)))
        }
    }

    func delete(deviceRowIDs: [UUID]) async throws -> Int {
        guard !deviceRowIDs.isEmpty else { return 0 }
        let list = Array(repeating: "?", count: deviceRowIDs.count).joined(separator: ", ")
        // Challenges first: PostgreSQL enforces the foreign key, and the device goes right after.
        try await database.run(
            Statement("DELETE FROM device_challenges WHERE device_id IN (\(list))", deviceRowIDs.map { .uuid($0) }))
        return try await database.changes(
            Statement("DELETE FROM devices WHERE id IN (\(list))", deviceRowIDs.map { .uuid($0) }))
    }

    func markUsed(deviceRowID: UUID, now: Date) async throws {
        try await database.run(
            Statement("UPDATE devices SET last_used_at = ? WHERE id = ?", .date(now), .uuid(deviceRowID)))
    }

    func setPIN(hash: String, deviceRowID: UUID, onlyIfNone: Bool, now: Date) async throws -> Bool {
        try await database.changes(
            Statement(
                """
                UPDATE devices SET pin_hash = ?, pin_failures = 0, pin_blocked = false, updated_at = ?
                WHERE id = ?\(onlyIfNone ? " AND pin_hash IS NULL" : "")
                """, .text(hash), .date(now), .uuid(deviceRowID))) > 0
    }

    func takePINAttempt(deviceRowID: UUID, maximum: Int) async throws -> Int? {
        try await database.rows(
            Statement(
                """
                UPDATE devices SET pin_failures = pin_failures + 1
                WHERE id = ? AND pin_blocked = false AND pin_failures < ?
                RETURNING pin_failures
                """, .uuid(deviceRowID), .integer(maximum)), { try $0.integer(0) }
        ).first
    }

    func clearPINFailures(deviceRowID: UUID) async throws {
        try await database.run(Statement("UPDATE devices SET pin_failures = 0 WHERE id = ?", .uuid(deviceRowID)))
    }

    func blockPIN(deviceRowID: UUID) async throws -> Bool {
        try await database.changes(
            Statement(
                "UPDATE devices SET pin_blocked = true WHERE id = ? AND pin_blocked = false", .uuid(deviceRowID))) > 0
    }

    func unblockPIN(deviceRowID: UUID) async throws -> Bool {
        try await database.changes(
            Statement(
                "UPDATE devices SET pin_failures = 0, pin_blocked = false WHERE id = ? AND pin_blocked = true",
                .uuid(deviceRowID))) > 0
    }

    private static let challengeColumns =
        "id, device_id, user_id, purpose, flow_id, challenge, created_at, expires_at, used_at"

    func insertChallenge(_ challenge: DeviceChallengeRecord) async throws {
        try await database.run(
            Statement(
                "INSERT INTO device_challenges (\(Self.challengeColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                .uuid(challenge.id), .uuid(challenge.deviceRowID), .uuid(challenge.userID),
                .text(challenge.purpose.rawValue), .uuid(challenge.flowID), .text(challenge.challenge),
                .date(challenge.createdAt), .date(challenge.expiresAt), .date(challenge.usedAt)))
        guard challenge.purpose != .signIn else { return }
        let sameFlow = challenge.flowID == nil ? "flow_id IS NULL" : "flow_id = ?"
        try await database.run(
            Statement(
                """
                UPDATE device_challenges SET used_at = ?
                WHERE device_id = ? AND purpose = ? AND \(sameFlow) AND id <> ? AND used_at IS NULL
                """,
                [.date(challenge.createdAt), .uuid(challenge.deviceRowID), .text(challenge.purpose.rawValue)]
                    + (challenge.flowID.map { [.uuid($0)] } ?? []) + [.uuid(challenge.id)]))
    }

    func challenge(id: UUID) async throws -> DeviceChallengeRecord? {
        try await database.rows(
            Statement("SELECT \(Self.challengeColumns) FROM device_challenges WHERE id = ?", .uuid(id))
        ) { row in
            guard let purpose = DeviceChallengeRecord.Purpose(rawValue: try row.text(3)) else {
                throw StatementRowError(column: 3, reason: "is not a challenge purpose")
            }
            return DeviceChallengeRecord(
                id: try row.uuid(0), deviceRowID: try row.uuid(1), userID: try row.uuid(2), purpose: purpose,
                flowID: try row.optionalUUID(4), challenge: try row.text(5), createdAt: try row.date(6),
                expiresAt: try row.date(7), usedAt: try row.optionalDate(8))
        }.first
    }

    func claimChallenge(id: UUID, now: Date) async throws -> Bool {
        try await database.changes(
            Statement(
                "UPDATE device_challenges SET used_at = ? WHERE id = ? AND used_at IS NULL AND expires_at > ?",
                .date(now), .uuid(id), .date(now))) > 0
    }

    func deleteChallenges(expiredBefore before: Date) async throws {
        try await database.run(Statement("DELETE FROM device_challenges WHERE expires_at <= ?", .date(before)))
    }
}

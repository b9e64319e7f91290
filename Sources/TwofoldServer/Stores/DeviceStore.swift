import Foundation

/// Enrolled devices and their challenges (`devices`, `device_challenges`). Only housekeeping's
/// part so far; the rest of the devices' statements are still in `DeviceKeyController` and
/// `DeviceSecondFactorController` while they move here.
protocol DeviceStore: Sendable {
    /// Deletes challenges that expired by `before` (housekeeping).
    func deleteChallenges(expiredBefore before: Date) async throws
}

/// `DeviceStore` on the server's database.
struct SQLDeviceStore: DeviceStore {
    let database: any SQLExecutor

    func deleteChallenges(expiredBefore before: Date) async throws {
        try await database.run(Statement("DELETE FROM device_challenges WHERE expires_at <= ?", .date(before)))
    }
}

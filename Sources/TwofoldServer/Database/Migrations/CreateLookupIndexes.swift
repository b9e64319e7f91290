import Fluent
import SQLKit

/// Indexes for the lookups requests make by something other than a table's key. Without them
/// each of these statements reads its whole table, so its cost grows with every sign-in ever
/// made: counting a user's wrong codes of the day (every wrong code), revoking a user's
/// sessions or remembered devices, finding a refresh token's siblings, a flow's sent codes, the
/// messages due for delivery, a user's audit trail, a device by its id.
struct CreateLookupIndexes: IndexMigration {
    static let indexes: [IndexMigrationEntry] = [
        ("factor_failures_by_user", "factor_failures", ["user_id", "occurred_at"]),
        ("sessions_by_user", "sessions", ["user_id"]),
        ("refresh_tokens_by_session", "refresh_tokens", ["session_id"]),
        ("one_time_codes_by_user", "one_time_codes", ["user_id", "channel", "purpose"]),
        ("one_time_codes_by_flow", "one_time_codes", ["flow_id"]),
        ("trusted_devices_by_user", "trusted_devices", ["user_id"]),
        ("outbox_messages_by_next_attempt", "outbox_messages", ["next_attempt_at"]),
        ("audit_events_by_user", "audit_events", ["user_id", "occurred_at"]),
        ("devices_by_device_id", "devices", ["device_id"]),
        ("device_challenges_by_device", "device_challenges", ["device_id"]),
    ]

}

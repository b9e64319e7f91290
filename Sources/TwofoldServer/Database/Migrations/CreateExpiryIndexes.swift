import Fluent
import SQLKit

/// Indexes on the times `Housekeeping` deletes by. Without them each minute's sweep read every
/// flow, refresh token, failure and challenge ever kept, holding the write lock all the while
/// (sign-ins wait for it). Times grow with each row, so new entries land on the last page of
/// these indexes and cost the writes that make them little.
struct CreateExpiryIndexes: IndexMigration {
    static let indexes: [IndexMigrationEntry] = [
        ("totp_credentials_by_status_expiry", "totp_credentials", ["status", "expires_at"]),
        ("login_flows_by_expiry", "login_flows", ["expires_at"]),
        ("refresh_tokens_by_expiry", "refresh_tokens", ["expires_at"]),
        ("refresh_tokens_by_use", "refresh_tokens", ["used_at"]),
        ("rate_limit_buckets_by_update", "rate_limit_buckets", ["updated_at"]),
        ("factor_failures_by_time", "factor_failures", ["occurred_at"]),
        ("device_challenges_by_expiry", "device_challenges", ["expires_at"]),
    ]

}

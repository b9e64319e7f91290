import Fluent

struct CreateRateLimitBuckets: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("rate_limit_buckets")
            .field("key", .string, .identifier(auto: false))
            .field("tokens", .double, .required)
            .field("updated_at", .double, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("rate_limit_buckets").delete()
    }
}

import Fluent
import Foundation
import SQLKit
import Testing
import VaporTesting

/// Reads the audit table directly, as an operator would.
enum AuditQueries {
    static func count(type: String, on app: Application) async throws -> Int {
        let sql = try #require(app.db as? any SQLDatabase)
        let row = try await sql.raw("SELECT COUNT(*) AS n FROM audit_events WHERE type = \(bind: type)").first()
        return try row?.decode(column: "n", as: Int.self) ?? 0
    }

    static func count(table: String, on app: Application) async throws -> Int {
        let sql = try #require(app.db as? any SQLDatabase)
        let row = try await sql.raw("SELECT COUNT(*) AS n FROM \(ident: table)").first()
        return try row?.decode(column: "n", as: Int.self) ?? 0
    }
}

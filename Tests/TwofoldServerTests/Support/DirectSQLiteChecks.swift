import FluentKit
import Foundation
import SQLKit
import Testing
import TwofoldAPI
import TwofoldSQLite
import VaporTesting

@testable import TwofoldServer

/// What the SQLite engine's tests read: a request on the app, audit events, Fluent's counts.
enum DirectSQLiteChecks {
    static func request(_ app: Application) -> Request {
        Request(application: app, method: .POST, url: "/", on: app.eventLoopGroup.next())
    }

    static func events(of type: AuditEvent, _ app: Application) async throws -> Int {
        try await fluentCount(type.rawValue, app.db)
    }

    /// Audit events of `type`, counted on one of Fluent's connections (not Twofold's own).
    static func fluentCount(_ type: String, _ database: any Database) async throws -> Int {
        let sql = try #require(database as? any SQLDatabase)
        return try await sql.raw("SELECT id FROM audit_events WHERE type = \(bind: type)").all().count
    }
}

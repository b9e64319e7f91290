import SQLKit
import Vapor

extension Request {
    /// The database as SQL, for the atomic conditional updates Fluent's query builder cannot
    /// express: Twofold's own SQLite connection for a database file, else Fluent's database,
    /// made once per request (each `db` access builds a new handle).
    var sql: any SQLDatabase {
        get throws {
            if let cached = storage[SQLDatabaseKey.self] { return cached }
            guard let sql = twofold.sqlite?.database ?? db as? any SQLDatabase else {
                throw Abort(.internalServerError, reason: "Twofold needs an SQL database")
            }
            storage[SQLDatabaseKey.self] = sql
            return sql
        }
    }
}

private struct SQLDatabaseKey: StorageKey {
    typealias Value = any SQLDatabase
}

import Fluent
import FluentSQLiteDriver
import SQLKit
import Vapor

/// Settings for an SQLite database file, applied to every connection at start (one per event
/// loop): write-ahead logging, so readers never wait for the writer and a commit is one
/// sequential write; `synchronous=NORMAL`, which in WAL mode never corrupts the file and loses at
/// most the last commits on a power cut (not on a crash of the process); and a 5-second busy
/// timeout, so a connection waiting for the write lock sleeps instead of spinning (sqlite-nio's
/// own busy handler retries in a tight loop).
enum SQLiteTuning {
    static let pragmas = ["PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA busy_timeout = 5000"]

    static func apply(to app: Application) async throws {
        for loop in app.eventLoopGroup.makeIterator() {
            guard let database = app.databases.database(.sqlite, logger: app.logger, on: loop) as? any SQLDatabase
            else { continue }
            for pragma in pragmas { try await database.raw(SQLQueryString(pragma)).run() }
        }
    }
}

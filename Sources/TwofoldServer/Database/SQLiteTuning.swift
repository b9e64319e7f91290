import Fluent
import FluentSQLiteDriver
import SQLKit
import TwofoldSQLite
import Vapor

/// Settings for an SQLite database file, applied to every connection at start (one per event
/// loop): write-ahead logging, so readers never wait for the writer and a commit is one
/// sequential write; `synchronous=NORMAL`, which in WAL mode never corrupts the file and loses at
/// most the last commits on a power cut (not on a crash of the process); and a 5-second busy
/// timeout, so a connection waiting for the write lock sleeps instead of spinning (sqlite-nio's
/// own busy handler retries in a tight loop).
enum SQLiteTuning {

    static func apply(to app: Application) async throws {
        for loop in app.eventLoopGroup.makeIterator() {
            guard let database = app.databases.database(.sqlite, logger: app.logger, on: loop) as? any SQLDatabase
            else { continue }
            for pragma in SQLitePragmas.all { try await database.raw(SQLQueryString(pragma)).run() }
        }
    }
}

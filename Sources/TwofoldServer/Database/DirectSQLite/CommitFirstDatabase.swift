import FluentKit
import Logging
import NIOCore
import SQLKit

/// Fluent's SQLite database with one addition: an operation started on the direct connection's
/// thread first commits that connection's open write group. Fluent's connections are others, so
/// without it a unit of work next to the database that wrote through `request.sql` and then read
/// through `request.db` would not see its own writes.
struct CommitFirstDatabase: Database, SQLDatabase {
    let base: any Database & SQLDatabase
    let direct: DirectSQLiteConnection

    private func commitFirst() {
        if direct.thread.isCurrent { try? direct.commit() }
    }

    // Database

    var context: DatabaseContext { base.context }
    var inTransaction: Bool { base.inTransaction }

    func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void)
        -> EventLoopFuture<Void>
    {
        commitFirst()
        return base.execute(query: query, onOutput: onOutput)
    }

    func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> {
        commitFirst()
        return base.execute(schema: schema)
    }

    func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> {
        commitFirst()
        return base.execute(enum: `enum`)
    }

    func transaction<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        commitFirst()
        return base.transaction(closure)
    }

    func withConnection<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        commitFirst()
        return base.withConnection(closure)
    }

    // SQLDatabase

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
        -> EventLoopFuture<Void>
    {
        commitFirst()
        return base.execute(sql: query, onRow)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        commitFirst()
        try await base.execute(sql: query, onRow)
    }
}

/// Builds `CommitFirstDatabase`s around the databases of another SQLite configuration.
struct CommitFirstConfiguration: DatabaseConfiguration {
    var base: any DatabaseConfiguration
    let direct: DirectSQLiteConnection

    var middleware: [any AnyModelMiddleware] {
        get { base.middleware }
        set { base.middleware = newValue }
    }

    func makeDriver(for databases: Databases) -> any DatabaseDriver {
        Driver(base: base.makeDriver(for: databases), direct: direct)
    }

    struct Driver: DatabaseDriver {
        let base: any DatabaseDriver
        let direct: DirectSQLiteConnection

        func makeDatabase(with context: DatabaseContext) -> any Database {
            let database = base.makeDatabase(with: context)
            guard let sql = database as? any Database & SQLDatabase else { return database }
            return CommitFirstDatabase(base: sql, direct: direct)
        }

        func shutdown() { base.shutdown() }
        func shutdownAsync() async { await base.shutdownAsync() }
    }
}

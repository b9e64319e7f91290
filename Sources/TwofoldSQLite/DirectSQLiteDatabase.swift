import NIOCore

/// Where the stores' statements meet the direct connection. A statement sent from its thread,
/// inside `UnitsOfWork.run`, runs at once and joins the unit's write group; from elsewhere it
/// hops there, runs and commits.
package struct DirectSQLiteDatabase: Sendable {
    package let connection: DirectSQLiteConnection

    package var eventLoop: any EventLoop { connection.thread.loop }

    /// Runs a typed statement: at once inside a unit of work on the connection's thread,
    /// else on the thread and committed.
    package func rows<T: Sendable>(_ statement: Statement, _ read: @escaping @Sendable (StatementRow) throws -> T)
        async throws -> [T]
    {
        let connection = connection
        if connection.thread.isCurrent, let unit = WriteGroups.current {
            var rows: [T] = []
            let group = try connection.run(statement) { rows.append(try read(StatementRow($0))) }
            if let group { unit.record(group) }
            return rows
        }
        return try await eventLoop.submit {
            var rows: [T] = []
            _ = try connection.run(statement) { rows.append(try read(StatementRow($0))) }
            try connection.commit()
            return rows
        }.get()
    }

    /// Runs a typed statement that writes and answers how many rows it changed; where it runs
    /// and commits as `rows(_:_:)`.
    package func changes(_ statement: Statement) async throws -> Int {
        let connection = connection
        if connection.thread.isCurrent, let unit = WriteGroups.current {
            let (group, changes) = try connection.changes(statement)
            if let group { unit.record(group) }
            return changes
        }
        return try await eventLoop.submit {
            let changes = try connection.changes(statement).changes
            try connection.commit()
            return changes
        }.get()
    }
}

/// The write groups a unit of work next to the database wrote in; it answers once they are
/// committed. Touched only on the direct connection's thread, which makes `@unchecked
/// Sendable` safe.
package final class WriteGroups: @unchecked Sendable {
    @TaskLocal package static var current: WriteGroups?

    package private(set) var groups: [UInt64] = []

    package init() {}

    package func record(_ group: UInt64) {
        if groups.last != group { groups.append(group) }
    }
}

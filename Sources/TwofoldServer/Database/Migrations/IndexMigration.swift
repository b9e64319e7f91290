import Fluent
import SQLKit

/// One index a migration creates: its name, its table and its columns in order.
typealias IndexMigrationEntry = (name: String, table: String, columns: [String])

/// A migration that only creates indexes: it lists them, and creating and dropping them is the
/// same for every such migration.
protocol IndexMigration: AsyncMigration {
    static var indexes: [IndexMigrationEntry] { get }
}

extension IndexMigration {
    func prepare(on database: any Database) async throws {
        guard let sql = database as? any SQLDatabase else { return }
        for index in Self.indexes {
            var create = sql.create(index: index.name).on(index.table)
            for column in index.columns { create = create.column(column) }
            try await create.run()
        }
    }

    func revert(on database: any Database) async throws {
        guard let sql = database as? any SQLDatabase else { return }
        for index in Self.indexes.reversed() { try await sql.drop(index: index.name).run() }
    }
}

import Foundation
import SQLKit
import Testing
import TwofoldSQLite

@testable import TwofoldServer

/// `StatementRow` over an SQLKit row (PostgreSQL's path), which reads columns by name: a column
/// whose name another column shares is refused, never read from the wrong column.
@Suite(.tags(.database))
struct StatementRowTests {
    /// Reads by name as PostgreSQL's rows do: the first column of that name.
    struct NamedRow: SQLRow {
        let allColumns: [String]
        let values: [String]

        func contains(column: String) -> Bool { allColumns.contains(column) }
        func decodeNil(column: String) throws -> Bool { false }
        func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
            let value = values[allColumns.firstIndex(of: column)!]
            if let uuid = UUID(uuidString: value) as? D { return uuid }
            if D.self == UUID?.self { return UUID(uuidString: value) as! D }
            if D.self == String?.self { return value as! D }
            return value as! D
        }
    }

    @Test func readsEachColumnByPositionWhenNamesAreUnique() throws {
        let (flow, user) = (UUID(), UUID())
        let row = StatementRow(
            SQLKitColumns(NamedRow(allColumns: ["flow_id", "user_id"], values: [flow.uuidString, user.uuidString])))
        #expect(try row.uuid(0) == flow)
        #expect(try row.uuid(1) == user)
    }

    @Test func refusesAColumnWhoseNameAnotherColumnShares() throws {
        // A join of two tables' `id` columns without aliases: PostgreSQL names both `id`.
        let row = StatementRow(
            SQLKitColumns(NamedRow(allColumns: ["id", "id"], values: [UUID().uuidString, UUID().uuidString])))
        #expect(throws: StatementRowError.self) { try row.uuid(1) }
        #expect(throws: StatementRowError.self) { try row.uuid(0) }
        #expect(throws: StatementRowError.self) { try row.uuid(2) }
    }
}

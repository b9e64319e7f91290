import Foundation
import Testing
import TwofoldTestSupport

/// Controllers, services, middleware, delivery and commands reach the database only through
/// stores (docs/persistence.md): no Fluent, FluentKit or SQLKit import, no `request.db`,
/// `request.sql`, Fluent query or raw SQL. Only `Database/` (the executor, the SQLite engine,
/// migrations), `Stores/` and the start-up that configures Fluent and migrates may.
@Suite struct StoreBoundaryTests {
    static let mayReachTheDatabase = ["Database/", "Stores/", "Application+Twofold.swift", "ServerMain.swift"]

    @Test func onlyStoresReachTheDatabase() throws {
        let root = BuildProducts.repositoryRoot.appendingPathComponent("Sources/TwofoldServer")
        let forbidden = /^import (Fluent|FluentKit|SQLKit)$|request\.db\b|request\.sql\b|\.query\(on:|\.sql\.raw/
        var offending = Set<String>()
        var checked = 0
        let files = try #require(FileManager.default.enumerator(atPath: root.path))
        for case let path as String in files where path.hasSuffix(".swift") {
            guard !Self.mayReachTheDatabase.contains(where: { path.hasPrefix($0) }) else { continue }
            checked += 1
            let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            if text.split(separator: "\n").contains(where: { $0.contains(forbidden) }) {
                offending.insert(path)
            }
        }
        #expect(checked > 40, "the walk found the sources")
        #expect(offending.isEmpty, "reach the database directly: \(offending.sorted())")
    }
}

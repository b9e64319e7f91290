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

    /// Services take values, never a `Request`; controllers and middleware hold what they use,
    /// passed in when they are built, rather than looking it up on the request; no controller
    /// calls another.
    @Test func dependenciesArePassedIn() throws {
        let root = BuildProducts.repositoryRoot.appendingPathComponent("Sources/TwofoldServer")
        func lines(in folder: String) throws -> [(file: String, line: Substring)] {
            let url = root.appendingPathComponent(folder)
            return try FileManager.default.contentsOfDirectory(atPath: url.path).filter { $0.hasSuffix(".swift") }
                .flatMap { name in
                    try String(contentsOf: url.appendingPathComponent(name), encoding: .utf8)
                        .split(separator: "\n").map { (name, $0) }
                }
        }
        let services = try lines(in: "Services").filter { $0.line.contains(/\bRequest\b/) }
        #expect(services.isEmpty, "services that see a Request: \(services.map(\.file))")
        let lookups = try (lines(in: "Controllers") + lines(in: "Middleware"))
            .filter { $0.line.contains(/request\.(application\.)?twofold\b|\.application\.twofold\b/) }
        #expect(lookups.isEmpty, "look services up on the request: \(lookups.map(\.file))")
        let controllers = try lines(in: "Controllers")
        let names = Set(controllers.map { $0.file.replacingOccurrences(of: ".swift", with: "") })
            .filter { $0.hasSuffix("Controller") }
        let calls = controllers.filter { entry in
            names.contains { name in !entry.file.hasPrefix(name) && entry.line.contains("\(name).") }
        }
        #expect(calls.isEmpty, "controllers that call another: \(calls.map(\.file))")
    }
}

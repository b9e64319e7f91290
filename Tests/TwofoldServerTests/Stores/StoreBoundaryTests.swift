import Foundation
import Testing
import TwofoldTestSupport

/// Controllers, services, middleware, delivery and commands reach the database only through
/// stores (docs/persistence.md): no Fluent, FluentKit or SQLKit import, no `request.db`,
/// `request.sql`, Fluent query or raw SQL. Only `Database/` (the executor, the SQLite engine,
/// migrations), `Stores/` and the start-up that configures Fluent and migrates may.
@Suite struct StoreBoundaryTests {
    static let mayReachTheDatabase = ["Database/", "Stores/", "Application+Twofold.swift", "ServerMain.swift"]

    /// The lines of the server's sources in `folder` and the folders inside it, each with its
    /// file's name.
    static func lines(in folder: String) throws -> [(file: String, line: Substring)] {
        let url = BuildProducts.repositoryRoot.appendingPathComponent("Sources/TwofoldServer").appendingPathComponent(
            folder)
        let paths = try #require(FileManager.default.enumerator(atPath: url.path)).compactMap { $0 as? String }
        return try paths.filter { $0.hasSuffix(".swift") }.flatMap { path in
            try String(contentsOf: url.appendingPathComponent(path), encoding: .utf8)
                .split(separator: "\n").map { ((path as NSString).lastPathComponent, $0) }
        }
    }

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
        #expect(try Self.lines(in: "Services").count > 5000, "the walk found the services, in their folders")
        let services = try Self.lines(in: "Services").filter { $0.line.contains(/\bRequest\b/) }
        #expect(services.isEmpty, "services that see a Request: \(services.map(\.file))")
        let lookups = try (Self.lines(in: "Controllers") + Self.lines(in: "Middleware"))
            .filter { $0.line.contains(/request\.(application\.)?twofold\b|\.application\.twofold\b/) }
        #expect(lookups.isEmpty, "look services up on the request: \(lookups.map(\.file))")
        let controllers = try Self.lines(in: "Controllers")
        let names = Set(controllers.map { $0.file.replacingOccurrences(of: ".swift", with: "") })
            .filter { $0.hasSuffix("Controller") }
        let calls = controllers.filter { entry in
            names.contains { name in !entry.file.hasPrefix(name) && entry.line.contains("\(name).") }
        }
        #expect(calls.isEmpty, "controllers that call another: \(calls.map(\.file))")
    }

    /// Controllers reach no store's internals and choose no database strategy: the use cases'
    /// services do (`SecondStep` holds the unit of work and PostgreSQL's single statement). And
    /// no service or store tells a person to call an API path: a page shows their messages too.
    @Test func controllersHoldUseCasesAndServicesSpeakWithoutPaths() throws {
        let controllers = try Self.lines(in: "Controllers")
        #expect(controllers.count > 500, "the walk found the controllers")
        let reachThroughs = controllers.filter {
            $0.line.contains(
                /\.store\b|UnitsOfWork|unitsOfWork|CodeSignInStore|codeSignIns|PasskeySignInStore|passkeySignIns|TwofoldContext/
            )
        }
        #expect(reachThroughs.isEmpty, "controllers that reach past a service: \(reachThroughs.map(\.file))")
        // Controllers hold services only: the caller's own account comes from `Callers`.
        let stores = controllers.filter { $0.line.contains(/let \w+: any \w*Store\b/) }
        #expect(stores.isEmpty, "controllers that hold a store: \(stores.map { "\($0.file): \($0.line)" })")
        // What a controller may call of the user store is reading the caller's own account; the
        // policy, the audit log, passwords and throttles are the use cases' to ask.
        let decisions = controllers.filter {
            $0.line.contains(/\b(users|policy|audit|passwords|rateLimiter|factorChanges)\.[a-z]/)
        }
        #expect(decisions.isEmpty, "controllers that decide themselves: \(decisions.map { "\($0.file): \($0.line)" })")
        let spoken = try (Self.lines(in: "Services") + Self.lines(in: "Stores")).filter { entry in
            !entry.line.trimmingCharacters(in: .whitespaces).hasPrefix("//")
                && entry.line.contains(/(GET|POST|PUT|PATCH|DELETE) \/|\/api\/v1\//)
        }
        #expect(spoken.isEmpty, "messages that name an API path: \(spoken.map { "\($0.file): \($0.line)" })")
    }

    /// Pages reach services only, as controllers do: no store held or reached through, no
    /// policy decided on the page. And their HTML is `Markup`, escaped by type: no page escapes
    /// by hand, and none makes markup out of a string made at run time.
    @Test func pagesHoldServicesAndEscapeByType() throws {
        let pages = try Self.lines(in: "Pages")
        #expect(pages.count > 2000, "the walk found the pages")
        let stores = pages.filter {
            $0.line.contains(/any \w*Store\b|\.store\b|UnitsOfWork|TwofoldContext|\.twofold\b|\busers\.[a-z]/)
        }
        #expect(stores.isEmpty, "pages that reach a store: \(stores.map { "\($0.file): \($0.line)" })")
        let handMade = pages.filter { entry in
            entry.file != "Markup.swift"
                && entry.line.contains(/\.escape\(|Markup\(stringLiteral|Markup\(rendered|init\(rendered/)
        }
        #expect(handMade.isEmpty, "escaping by hand: \(handMade.map { "\($0.file): \($0.line)" })")
        // Pages live in areas (`PageArea`), each with the services it uses; `PagesController` only wires.
        let wired = pages.filter { $0.line.contains("extension PagesController") }
        #expect(wired.isEmpty, "pages added to the wiring type: \(wired.map(\.file))")
        let areas = pages.filter { $0.line.contains(/^struct \w+: PageArea \{/) }
        #expect(areas.count >= 6, "the areas: \(areas.map(\.line))")
    }
}

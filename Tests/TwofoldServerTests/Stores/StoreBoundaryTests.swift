import Foundation
import Testing
import TwofoldTestSupport

/// Controllers and services reach the database only through stores (docs/persistence.md): no
/// Fluent, FluentKit or SQLKit import, no `request.db`, `request.sql`, Fluent query or raw SQL.
/// The files below still do, while their tables move into stores; the list only shrinks (a file
/// that no longer does must leave it, and no other file may join it).
@Suite struct StoreBoundaryTests {
    static let notYetMoved: Set<String> = [
        "AccountController.swift", "DeviceKeyController.swift",
        "DeviceSecondFactorController.swift", "SecondStepController.swift",
        "TwoFactorController.swift", "RepeatingJob.swift",
        "TwofoldContext.swift",
    ]

    @Test func controllersAndServicesGoThroughStores() throws {
        let root = BuildProducts.repositoryRoot.appendingPathComponent("Sources/TwofoldServer")
        let forbidden = /^import (Fluent|FluentKit|SQLKit)$|request\.db\b|request\.sql\b|\.query\(on:|\.sql\.raw/
        var offending = Set<String>()
        for folder in ["Controllers", "Services"] {
            let url = root.appendingPathComponent(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: url.path) where name.hasSuffix(".swift") {
                let text = try String(contentsOf: url.appendingPathComponent(name), encoding: .utf8)
                if text.split(separator: "\n").contains(where: { $0.contains(forbidden) }) {
                    offending.insert(name)
                }
            }
        }
        #expect(
            offending.subtracting(Self.notYetMoved).isEmpty,
            "reach the database directly: \(offending.subtracting(Self.notYetMoved).sorted())")
        #expect(
            Self.notYetMoved.subtracting(offending).isEmpty,
            "no longer do, take them off the list: \(Self.notYetMoved.subtracting(offending).sorted())")
    }
}

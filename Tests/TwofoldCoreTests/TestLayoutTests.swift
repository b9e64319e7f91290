import Foundation
import Testing
import TwofoldTestSupport

/// The tests read like the product (docs/architecture.md, "The tests"): files named by what they
/// protect, never by where a finding came from; a suite uses its target's `Support/` and
/// `TwofoldTestSupport`, never another suite's helpers; time passes by a clock the tests move,
/// not by sleeping.
@Suite struct TestLayoutTests {
    /// Every Swift file under `Tests/`: its path from `Tests/` and its text.
    static func testSources() throws -> [(path: String, text: String)] {
        let root = BuildProducts.repositoryRoot.appendingPathComponent("Tests")
        let paths = try #require(FileManager.default.enumerator(atPath: root.path)).compactMap { $0 as? String }
        return try paths.filter { $0.hasSuffix(".swift") }.sorted().map {
            ($0, try String(contentsOf: root.appendingPathComponent($0), encoding: .utf8))
        }
    }

    @Test func filesAreNamedByWhatTheyProtect() throws {
        let sources = try Self.testSources()
        #expect(sources.count > 100, "the walk found the tests")
        let named = sources.map(\.path).filter { $0.contains(/Review|Finding|Attack|ClosedWays|Round[0-9]|Issue[A-Z]/) }
        #expect(named.isEmpty, "named after a review or an attack round, not a feature: \(named)")
    }

    /// A suite (a type marked `@Suite` or named `…Tests`) is reached from no other file.
    @Test func noSuiteUsesAnotherSuitesHelpers() throws {
        let sources = try Self.testSources()
        var suites: [String: String] = [:]
        for (path, text) in sources {
            for match in text.matches(of: /(?m)^(@Suite[^\n]*\s+)?(?:final )?(?:struct|enum|class) (\w+)/) {
                let name = String(match.output.2)
                if match.output.1 != nil || name.hasSuffix("Tests") { suites[name] = path }
            }
        }
        #expect(suites.count > 80, "the walk found the suites: \(suites.count)")
        var reaches: [String] = []
        for (path, text) in sources {
            let named = Set(text.matches(of: /\b([A-Z]\w*)\.[a-zA-Z]/).map { String($0.output.1) })
            for name in named where suites[name].map({ $0 != path }) ?? false {
                reaches.append("\(path) → \(name)")
            }
        }
        #expect(reaches.isEmpty, "suites used from other files (move the helper to Support/): \(reaches.sorted())")
    }

    /// A server test calls the server as an app does, through the SDK's typed client over the
    /// application in process (`app.client(from:)`); what that client cannot send (malformed bytes,
    /// pages and their forms) goes through one helper, `app.raw`. Both live in one file; an
    /// end-to-end test builds a `URLRequest` by hand only in its target's `Support/`.
    @Test func requestsGoThroughTheTypedClientOrOneRawHelper() throws {
        let sources = try Self.testSources().filter { $0.path != "TwofoldCoreTests/TestLayoutTests.swift" }
        let inProcess = sources.filter { $0.text.contains("testing()") }.map(\.path)
        #expect(inProcess == ["TwofoldServerTests/Support/InProcessClient.swift"], "\(inProcess)")
        let byHand = sources.filter {
            $0.text.contains("URLRequest(") && !$0.path.hasPrefix("EndToEndTests/Support/")
        }.map(\.path)
        #expect(byHand.isEmpty, "requests built by hand outside Support/: \(byHand)")
    }

    @Test func noTestSleepsLongerThanASecond() throws {
        let long =
            /Task\.sleep\(for: \.seconds\(([0-9.]+)\)\)|Task\.sleep\(for: \.milliseconds\(([0-9_]+)\)\)|\busleep\(([0-9_]+)\)|\bsleep\(([0-9]+)\)|Thread\.sleep/
        var found: [String] = []
        for (path, text) in try Self.testSources() where path != "TwofoldCoreTests/TestLayoutTests.swift" {
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                guard let match = line.firstMatch(of: long) else { continue }
                let seconds: Double =
                    if let value = match.output.1 { Double(value) ?? .infinity } else if let value = match.output.2 {
                        (Double(value.replacingOccurrences(of: "_", with: "")) ?? .infinity) / 1000
                    } else if let value = match.output.3 {
                        (Double(value.replacingOccurrences(of: "_", with: "")) ?? .infinity) / 1_000_000
                    } else if let value = match.output.4 { Double(value) ?? .infinity } else { .infinity }
                if seconds > 1 { found.append("\(path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))") }
            }
        }
        #expect(found.isEmpty, "sleeps over a second (move a clock instead): \(found)")
    }
}

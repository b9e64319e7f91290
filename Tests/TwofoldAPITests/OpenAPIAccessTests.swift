import Foundation
import Testing
import TwofoldAPI
import TwofoldTestSupport

/// `docs/openapi.yaml` states what `API` declares: every endpoint is there, under its method,
/// and asks for a bearer token exactly when the endpoint needs a signed-in caller.
@Suite struct OpenAPIAccessTests {
    /// Each operation in the document (`METHOD /path`) and whether it lists bearer security.
    static func operations() throws -> [String: Bool] {
        let text = try String(
            contentsOf: BuildProducts.repositoryRoot.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        var operations: [String: Bool] = [:]
        var path: String?
        var current: String?
        var inPaths = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" "), !line.isEmpty { inPaths = line == "paths:" }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                path = String(line.dropFirst(2).dropLast())
                current = nil
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":"), let path {
                let method = line.trimmingCharacters(in: .whitespaces).dropLast().uppercased()
                if ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(method) {
                    current = "\(method) \(path)"
                    operations[current!] = false
                } else {
                    current = nil
                }
            } else if let current, line.hasPrefix("      security:"), line.contains("bearer") {
                operations[current] = true
            }
        }
        return operations
    }

    @Test func theDocumentDeclaresEachEndpointsAccess() throws {
        let operations = try Self.operations()
        for endpoint in API.all {
            let documented = operations[endpoint.route]
            #expect(documented != nil, "\(endpoint.route) is not in docs/openapi.yaml")
            guard let bearer = documented else { continue }
            #expect(
                bearer == (endpoint.access != .anyone),
                "\(endpoint.route): the document \(bearer ? "asks" : "does not ask") for a bearer token")
        }
        #expect(operations.count == API.all.count, "operations in the document but not in API")
    }
}

import Foundation
import TwofoldServer
import TwofoldTestSupport
import VaporTesting

/// Runs `body` against a fresh application: in-memory SQLite, its own data folder, migrated,
/// always shut down and cleaned up.
func withTestApp(
    mode: Configuration.Mode = .development,
    routes: (@Sendable (Application) throws -> Void)? = nil,
    _ body: (Application) async throws -> Void
) async throws {
    let directory = try BuildProducts.temporaryDirectory("twofold-test")
    defer { try? FileManager.default.removeItem(at: directory) }
    let configuration = Configuration(
        mode: mode, dataDirectory: directory.appendingPathComponent("data"), database: .sqliteInMemory,
        maxBodyBytes: 4096)
    try await withApp { app in
        try await configure(app, with: configuration)
        try routes?(app)
        try await app.autoMigrate()
        try await body(app)
    }
}

extension TestingHTTPResponse {
    /// The body as a problem document, or a test failure.
    func problem() throws -> ProblemBody {
        try JSONDecoder().decode(ProblemBody.self, from: Data(buffer: body))
    }
}

/// The wire form of a problem, decoded independently of the server's own type.
struct ProblemBody: Decodable {
    let type: String
    let title: String
    let status: Int
    let detail: String?
    let code: String
    let errors: [String: String]?
}

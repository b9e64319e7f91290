/// The answer of `GET /healthz` and `GET /readyz`.
public struct HealthStatus: Codable, Equatable, Sendable {
    /// `ok` when healthy.
    public var status: String
    /// Per-dependency state for `/readyz` (`database: ok`).
    public var checks: [String: String]?

    public init(status: String, checks: [String: String]? = nil) {
        self.status = status
        self.checks = checks
    }
}

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

/// `GET /.well-known/jwks.json`: the P-256 keys that verify access tokens (RFC 7517).
public struct JSONWebKeySet: Codable, Sendable, Equatable {
    public struct Key: Codable, Sendable, Equatable {
        public var kty = "EC"
        public var crv = "P-256"
        public var alg = "ES256"
        public var use = "sig"
        public var kid: String
        public var x: String
        public var y: String

        public init(kid: String, x: String, y: String) {
            self.kid = kid
            self.x = x
            self.y = y
        }
    }

    public var keys: [Key]

    public init(keys: [Key]) { self.keys = keys }
}

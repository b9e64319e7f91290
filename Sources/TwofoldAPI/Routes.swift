/// Paths shared by the server and its clients, so the two cannot drift apart.
public enum Routes {
    /// The prefix of every API path (API.md: "Base path `/api/v1`").
    public static let apiBase = "api/v1"
    public static let health = "healthz"
    public static let ready = "readyz"
    public static let metrics = "metrics"
    public static let openAPI = "openapi.yaml"
}

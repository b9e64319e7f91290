import Prometheus
import TwofoldAPI
import TwofoldSQLite
import Vapor

/// Liveness, readiness, metrics and the API description: what operators and load balancers call.
struct OperationsController: EndpointCollection {
    let registry: PrometheusCollectorRegistry
    let openAPIDocument: String
    let database: any SQLExecutor

    func boot(routes: EndpointRoutes) {
        routes.on(API.Operations.health, use: health)
        routes.on(API.Operations.ready, use: ready)
        routes.on(API.Operations.metrics, contentType: "text/plain; version=0.0.4; charset=utf-8", use: metrics)
        routes.on(API.Operations.openAPI, contentType: "application/yaml; charset=utf-8", use: openAPI)
    }

    /// The process is up and answering.
    @Sendable func health(request: Request, _: NoContent) async throws -> HealthStatus {
        HealthStatus(status: "ok")
    }

    /// The process can do its work: the database answers a query.
    @Sendable func ready(request: Request, _: NoContent) async throws -> HealthStatus {
        do {
            try await database.run(Statement("SELECT 1"))
        } catch {
            request.logger.warning("readiness check failed", metadata: ["error": "\(error)"])
            let reason = DatabaseOutage.reason(for: error) ?? "the check query failed: \(type(of: error))"
            throw Problem(
                status: 503, code: .serviceUnavailable, title: "Not ready",
                detail: "The database is not reachable: \(reason).", retryAfter: DatabaseOutage.retryAfter)
        }
        return HealthStatus(status: "ok", checks: ["database": "ok"])
    }

    /// Prometheus text exposition of the request counters and latency histograms.
    @Sendable func metrics(request: Request) async throws -> PlainText {
        PlainText(registry.emitToString())
    }

    /// `docs/openapi.yaml`, compiled into the server so it always matches the binary.
    @Sendable func openAPI(request: Request) async throws -> PlainText {
        PlainText(openAPIDocument)
    }
}

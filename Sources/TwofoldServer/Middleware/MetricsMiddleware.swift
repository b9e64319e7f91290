import Prometheus
import Vapor

/// Counts requests and records their latency by route pattern, method and status, for
/// `GET /metrics`. Route patterns (`api/v1/devices/:username`), never raw paths, keep the
/// number of series bounded and keep user names out of metrics.
///
/// This and the other application-wide middlewares work on futures, not `async`: an
/// `AsyncMiddleware` starts a task of its own for every request and hops threads to wait on the
/// next responder, which cost more than the work of a sign-in's second step.
struct MetricsMiddleware: Middleware {
    let registry: PrometheusCollectorRegistry

    static let buckets: [Duration] = [
        .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
        .seconds(5),
    ]

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        let clock = ContinuousClock()
        let start = clock.now
        return next.respond(to: request).map { response in
            record(response, to: request, after: clock.now - start)
            return response
        }
    }

    private func record(_ response: Response, to request: Request, after duration: Duration) {
        let route = request.route.map { "/" + $0.path.map(\.description).joined(separator: "/") } ?? "unmatched"
        let labels = [
            ("route", route), ("method", request.method.rawValue), ("status", String(response.status.code)),
        ]
        registry.makeCounter(
            descriptor: .init(
                metricName: "http_requests", unitName: "total", helpText: "HTTP requests answered"),
            labels: labels
        ).increment()
        registry.makeDurationHistogram(
            descriptor: .init(
                metricName: "http_request_duration", unitName: "seconds",
                helpText: "Time to answer HTTP requests"),
            labels: labels, buckets: Self.buckets
        ).record(duration)
    }
}

import NIOConcurrencyHelpers
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
    /// Each route, method and status's counter and histogram, found once: building the labels
    /// and looking them up in the registry cost more than recording.
    private let known = NIOLockedValueBox<[SeriesKey: Series]>([:])

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    static let buckets: [Duration] = [
        .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
        .seconds(5),
    ]

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        let clock = ContinuousClock()
        let start = clock.now
        return next.respond(to: request).map { response in
            let series = series(for: request, status: response.status.code)
            series.requests.increment()
            series.duration.record(clock.now - start)
            return response
        }
    }

    /// A route (the application keeps its routes for its lifetime, so their identity is a
    /// stable key; `nil` is a request no route matched), a method and a status.
    private struct SeriesKey: Hashable {
        let route: ObjectIdentifier?
        let method: String
        let status: UInt
    }

    private struct Series: Sendable {
        let requests: Counter
        let duration: DurationHistogram
    }

    private func series(for request: Request, status: UInt) -> Series {
        let key = SeriesKey(
            route: request.route.map(ObjectIdentifier.init), method: request.method.rawValue, status: status)
        if let series = known.withLockedValue({ $0[key] }) { return series }
        let route = request.route.map { "/" + $0.path.map(\.description).joined(separator: "/") } ?? "unmatched"
        let labels = [("route", route), ("method", request.method.rawValue), ("status", String(status))]
        let series = Series(
            requests: registry.makeCounter(
                descriptor: .init(metricName: "http_requests", unitName: "total", helpText: "HTTP requests answered"),
                labels: labels),
            duration: registry.makeDurationHistogram(
                descriptor: .init(
                    metricName: "http_request_duration", unitName: "seconds",
                    helpText: "Time to answer HTTP requests"),
                labels: labels, buckets: Self.buckets))
        known.withLockedValue { $0[key] = series }
        return series
    }
}

import Fluent
import FluentPostgresDriver
import FluentSQLiteDriver
import Foundation
import Prometheus
import Vapor

/// Sets up an application from a configuration: data folder and keys, database, middleware,
/// routes. The same function serves the binary and the in-process tests.
public func configure(_ app: Application, with configuration: Configuration) async throws {
    let dataDirectory = DataDirectory(url: configuration.dataDirectory)
    try dataDirectory.prepare()
    _ = try dataDirectory.signingKey()
    _ = try dataDirectory.encryptionKey()

    switch configuration.database {
    case .sqlite(let path):
        app.databases.use(.sqlite(.file(path)), as: .sqlite)
    case .sqliteInMemory:
        app.databases.use(.sqlite(.memory), as: .sqlite)
    case .postgres(let url):
        app.databases.use(try .postgres(url: url), as: .psql)
    }
    app.migrations.add(Migrations.all)

    app.http.server.configuration.hostname = configuration.host
    app.http.server.configuration.port = configuration.port
    app.routes.defaultMaxBodySize = ByteCount(value: configuration.maxBodyBytes)

    let registry = PrometheusCollectorRegistry()
    app.middleware = Middlewares()
    app.middleware.use(MetricsMiddleware(registry: registry))
    app.middleware.use(RequestIDMiddleware())
    app.middleware.use(RouteLoggingMiddleware(logLevel: .info))
    app.middleware.use(ProblemMiddleware(isProduction: configuration.mode == .production))

    try app.register(
        collection: OperationsController(registry: registry, openAPIDocument: try OpenAPIDocument.load()))
}

/// The OpenAPI description shipped inside the server (`docs/openapi.yaml` is a link to it).
enum OpenAPIDocument {
    static func load() throws -> String {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else {
            throw Abort(.internalServerError, reason: "openapi.yaml is missing from the server's resources")
        }
        return try String(contentsOf: url, encoding: .utf8)
    }
}

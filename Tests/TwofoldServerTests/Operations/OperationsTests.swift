import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldServer
import TwofoldTestSupport
import VaporTesting

@Suite(.tags(.database)) struct OperationsTests {
    @Test func healthAnswersOK() async throws {
        try await withTestApp { app in
            try await app.raw(.GET, API.Operations.health.path()) { response in
                #expect(response.status == .ok)
                #expect(response.body.string == #"{"status":"ok"}"#)
            }
        }
    }

    @Test func readinessChecksTheDatabase() async throws {
        try await withTestApp { app in
            let ready = try await app.client().send(API.Operations.ready)
            #expect(ready.checks?["database"] == "ok")
        }
    }

    @Test func readinessFailsWithAProblemWhenTheDatabaseIsGone() async throws {
        let directory = try BuildProducts.temporaryDirectory("twofold-ready")
        defer { try? FileManager.default.removeItem(at: directory) }
        // A PostgreSQL server that is not there: nothing listens on port 1.
        let configuration = Configuration(
            dataDirectory: directory, database: .postgres(url: "postgres://nobody:x@127.0.0.1:1/none"))
        try await withApp { app in
            try await configure(app, with: configuration)
            let refused = try await refusal { try await app.client().send(API.Operations.ready) }
            #expect(refused.status == 503)
            #expect(refused.retryAfterHeader == 5)
            let problem = try #require(refused.problem)
            #expect(problem.code == .serviceUnavailable)
            #expect(problem.detail?.contains("nobody") == false)
        }
    }

    @Test func metricsCountRequestsByRouteAndStatus() async throws {
        try await withTestApp { app in
            _ = try await app.client().send(API.Operations.health)
            _ = try await app.client().send(API.Operations.health)
            try await app.raw(.GET, "users/alice/secret") { _ in }
            try await app.raw(.GET, API.Operations.metrics.path()) { response in
                #expect(response.status == .ok)
                #expect(response.headers.first(name: .contentType)?.hasPrefix("text/plain; version=0.0.4") == true)
                let text = response.body.string
                #expect(text.contains(#"http_requests_total{route="/healthz",method="GET",status="200"} 2"#))
                #expect(text.contains(#"http_requests_total{route="unmatched",method="GET",status="404"} 1"#))
                #expect(text.contains("http_request_duration_seconds_bucket"))
                #expect(!text.contains("alice"), "raw paths never become labels")
            }
        }
    }

    @Test func openAPIDocumentIsServedAndMatchesDocs() async throws {
        let onDisk = try String(
            contentsOf: BuildProducts.repositoryRoot.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        try await withTestApp { app in
            try await app.raw(.GET, API.Operations.openAPI.path()) { response in
                #expect(response.status == .ok)
                #expect(response.headers.first(name: .contentType)?.hasPrefix("application/yaml") == true)
                #expect(response.body.string == onDisk)
            }
        }
    }

    @Test func everyServedRouteIsInTheOpenAPIDocument() async throws {
        let document = try String(
            contentsOf: BuildProducts.repositoryRoot.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        // The pages (`Pages`) are HTML for people, not the API the document describes.
        let pages = Set(Pages.all.map(\.route))
        try await withTestApp { app in
            for route in app.routes.all {
                let template =
                    "\(route.method.rawValue) /"
                    + route.path.map { component -> String in
                        if case .parameter(let name) = component { return "{\(name)}" }
                        return component.description
                    }.joined(separator: "/")
                if pages.contains(template) { continue }
                let path =
                    "/"
                    + route.path.map { component -> String in
                        if case .parameter(let name) = component { return "{\(name)}" }
                        return component.description
                    }.joined(separator: "/")
                #expect(document.contains("\n  \(path):\n"), "\(route.method) \(path) is not documented")
                #expect(document.contains("\n    \(route.method.rawValue.lowercased()):\n"), "\(route.method)")
            }
        }
    }
}

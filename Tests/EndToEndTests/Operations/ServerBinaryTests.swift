import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The real binary, started as a user would start it, spoken to over HTTP.
@Suite(.serialized) struct ServerBinaryTests {
    func permissions(_ url: URL) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func startsWithNothingConfiguredAndServesHealthAndOpenAPI() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("twofold-data")
        let server = try await ServerProcess(dataDirectory: data)
        defer { server.stop() }

        let client = server.client
        // The answer as it came: its exact text is checked.
        let health = try await client.exchange(API.Operations.health)
        #expect(health.status == 200)
        #expect(health.text == #"{"status":"ok"}"#)

        _ = try await client.send(API.Operations.ready)

        let openAPI = try await client.send(API.Operations.openAPI)
        let onDisk = try String(
            contentsOf: BuildProducts.repositoryRoot.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        #expect(openAPI.text == onDisk)

        // The data folder, its database and its keys exist, readable by the owner only.
        #expect(try permissions(data) == 0o700)
        #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent("twofold.sqlite").path))
        #expect(try permissions(data.appendingPathComponent("signing-key.pem")) == 0o600)
        #expect(try permissions(data.appendingPathComponent("encryption.key")) == 0o600)
        #expect(server.log.contains("http://127.0.0.1:\(server.port)"), "the log names the URL")
        // A first start says what a person needs: the URL, the data folder, how to make an
        // administrator, and that the database was set up; not every migration step.
        let log = server.log
        #expect(log.contains(data.path) && log.contains("twofold-server admin create"), "\(log)")
        #expect(log.contains("migrations applied") && !log.contains("[Migrator]"), "\(log)")
        #expect(log.split(separator: "\n").count < 12, "\(log)")
    }

    @Test func malformedRequestsGetProblemDocuments() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }

        // Raw: a path no endpoint has, a method an endpoint does not answer, a body that is not
        // JSON, an oversized body; no typed call can make these.
        let cases: [(URLRequest, Int, String)] = [
            (HTTP.request("GET", server.baseURL.appendingPathComponent("nope")), 404, "not_found"),
            (
                HTTP.request("POST", server.baseURL.appendingPathComponent(API.Operations.health.path())), 405,
                "method_not_allowed"
            ),
            (
                HTTP.request(
                    "POST", server.baseURL.appendingPathComponent(API.Auth.login.path()), body: Data("{nope".utf8),
                    contentType: "application/json"), 400, "malformed_request"
            ),
            (
                HTTP.request(
                    "PUT", server.baseURL.appendingPathComponent(API.Operations.metrics.path()),
                    body: Data(repeating: 0x41, count: 200_000), contentType: "application/json"), 405,
                "method_not_allowed"
            ),
        ]
        for (request, status, code) in cases {
            let response = try await HTTP.send(request)
            #expect(response.status == status, "\(request.httpMethod!) \(request.url!.path)")
            #expect(response.header("Content-Type")?.hasPrefix("application/problem+json") == true)
            let problem = try JSONDecoder().decode(ProblemFields.self, from: response.body)
            #expect(problem.code == code)
            #expect(problem.status == status)
        }
        #expect(try await server.client.send(API.Operations.health).status == "ok")
    }

    @Test func keysSurviveARestart() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        let first = try await ServerProcess(dataDirectory: data)
        first.stop()
        let key = try Data(contentsOf: data.appendingPathComponent("signing-key.pem"))
        let second = try await ServerProcess(dataDirectory: data)
        second.stop()
        #expect(try Data(contentsOf: data.appendingPathComponent("signing-key.pem")) == key)
    }

    @Test func migrateCommandRunsTheMigrations() throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        let server = ExternalTool(url: BuildProducts.executable("twofold-server"))
        let output = try server.run(
            ["migrate", "--yes"], environment: ["TWOFOLD_DATA_DIR": data.path, "PATH": "/usr/bin:/bin"])
        #expect(output.status == 0, "\(output.text)\(output.errorText)")
        #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent("twofold.sqlite").path))
    }

    @Test func aBadSettingStopsStartUpNamingTheVariable() throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = ExternalTool(url: BuildProducts.executable("twofold-server"))
        let output = try server.run(
            [], environment: ["TWOFOLD_DATA_DIR": root.path, "TWOFOLD_PORT": "eighty", "PATH": "/usr/bin:/bin"])
        #expect(output.status == 78)
        #expect(output.errorText.contains("TWOFOLD_PORT"))
        let badRule = try server.run(
            [],
            environment: [
                "TWOFOLD_DATA_DIR": root.path, "TWOFOLD_THROTTLE_REGISTER_PER_ADDRESS": "lots", "PATH": "/usr/bin:/bin",
            ])
        #expect(badRule.status == 78)
        #expect(badRule.errorText.contains("TWOFOLD_THROTTLE_REGISTER_PER_ADDRESS must be BURST/SECONDS"))
    }

    /// An integration suite run from one address raises the registration throttle with a
    /// setting, without a rebuild.
    @Test func theRegistrationThrottleIsASetting() async throws {
        for (setting, expected) in [(nil, 10), ("100/1", 15)] as [(String?, Int)] {
            let root = try BuildProducts.temporaryDirectory("twofold-e2e")
            defer { try? FileManager.default.removeItem(at: root) }
            var environment: [String: String] = [:]
            environment["TWOFOLD_THROTTLE_REGISTER_PER_ADDRESS"] = setting
            let server = try await ServerProcess(
                dataDirectory: root.appendingPathComponent("data"), environment: environment)
            defer { server.stop() }
            var created = 0
            for index in 0..<15 {
                do {
                    _ = try await server.client.send(
                        API.Auth.register,
                        RegisterRequest(
                            username: "suite\(index)", email: "suite\(index)@example.com",
                            password: TestAccounts.password))
                    created += 1
                } catch let error as APIError where error.status == 429 {
                    // Throttled: not created.
                }
            }
            #expect(created == expected, "\(setting ?? "default")")
        }
    }
}

/// The fields of a problem document every error carries.
struct ProblemFields: Decodable {
    let type: String
    let title: String
    let status: Int
    let code: String
}

@Suite struct StructuredLogTests {
    @Test func jsonLogLinesCarryTheRequestIDAndNoQueryStrings() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(
            dataDirectory: root.appendingPathComponent("data"), environment: ["TWOFOLD_LOG_FORMAT": "json"])
        defer { server.stop() }
        _ = try await server.client.send(
            API.Operations.health, query: [URLQueryItem(name: "code", value: "123456")],
            headers: [Wire.Header.requestID: "e2e-log-check"])
        try await Task.sleep(for: .milliseconds(200))
        server.stop()

        let lines = server.log.split(separator: "\n")
        #expect(!lines.isEmpty)
        var sawRequest = false
        for line in lines {
            let fields = try JSONDecoder().decode([String: String].self, from: Data(line.utf8))
            #expect(fields["time"] != nil && fields["level"] != nil && fields["message"] != nil)
            if fields["request-id"] == "e2e-log-check", fields["message"]?.contains("GET /healthz") == true {
                sawRequest = true
            }
        }
        #expect(sawRequest, "a log line names the request and its id")
        #expect(!server.log.contains("123456"), "query strings are not logged")
    }
}

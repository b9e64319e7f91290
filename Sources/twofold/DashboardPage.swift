import Foundation
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldScenarios
import TwofoldScreens

/// The dashboard's page and its small JSON interface, answered on the listener's threads: the
/// model lives on the main actor, so each request hops there and waits. Only this machine's
/// browser reaches it (127.0.0.1), and even so every call must name this server as its `Host`
/// (a DNS-rebinding page cannot) and carry the token. The token is never in what the server
/// serves: it travels only in the address the command prints (`#t=…`, a fragment no request
/// carries), which the page keeps for the tab and takes out of the address bar. So neither
/// another site's page nor another user of this machine (who can reach 127.0.0.1 too, but not
/// the terminal) can drive the dashboard.
final class DashboardPage: Sendable {
    let model: TestingDashboardModel
    let token: String

    init(model: TestingDashboardModel, token: String) { (self.model, self.token) = (model, token) }

    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    static let securityHeaders = [
        "Content-Security-Policy":
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
    ]

    func answer(_ request: LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Response {
        let host = request.headers["host"] ?? ""
        guard host == "127.0.0.1:\(request.port)" || host == "localhost:\(request.port)" else {
            return Self.problem(403, "This dashboard answers only at 127.0.0.1:\(request.port).")
        }
        switch (request.method, request.path) {
        case ("GET", "/"): return Self.file(Self.html, type: "text/html; charset=utf-8")
        case ("GET", "/dashboard.js"): return Self.file(Self.script, type: "text/javascript; charset=utf-8")
        case ("GET", "/dashboard.css"): return Self.file(Self.style, type: "text/css; charset=utf-8")
        case (_, let path) where path.hasPrefix("/api/"):
            guard let given = request.headers["x-dashboard-token"],
                ConstantTime.equals(Array(given.utf8), Array(token.utf8))
            else {
                return Self.problem(
                    403, "Open the address `twofold dashboard` printed: this page's token is not the server's.")
            }
            return api(request)
        case (_, "/"), (_, "/dashboard.js"), (_, "/dashboard.css"):
            return Self.problem(405, "Only GET here.")
        default:
            return Self.problem(404, "No such page.")
        }
    }

    private func api(_ request: LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Response {
        let model = self.model
        if request.method == "GET", request.path == "/api/state" {
            let snapshot = Self.onMain { model.snapshot }
            return Self.json(snapshot)
        }
        guard request.method == "POST" else { return Self.problem(405, "Use POST.") }
        guard request.headers["content-type"]?.hasPrefix("application/json") == true else {
            return Self.problem(415, "Send JSON.")
        }
        guard let fields = try? JSONDecoder().decode([String: String].self, from: request.body) else {
            return Self.problem(400, "The body must be a JSON object of strings.")
        }
        switch request.path {
        case "/api/action":
            guard let action = fields["action"].flatMap(TestingDashboardModel.Action.init(rawValue:)) else {
                return Self.problem(400, "Unknown action.")
            }
            return start(.action(action))
        case "/api/scenario":
            if fields["number"] == "all" { return start(.allScenarios) }
            guard let number = fields["number"].flatMap(Int.init), (1...10).contains(number) else {
                return Self.problem(400, "A scenario is numbered 1 to 10, or \"all\".")
            }
            return start(.scenario(number))
        case "/api/switch":
            guard let name = fields["name"], let value = fields["value"],
                let change = TestingDashboardModel.Switch(name: name, value: value)
            else { return Self.problem(400, "Unknown switch or value.") }
            Self.onMain { Task { await model.flip(change) } }
            return LoopbackHTTPServer.Response(status: 202, headers: Self.securityHeaders)
        case "/api/code":
            guard let code = fields["code"], code.count == 6, code.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                return Self.problem(400, "A code is six digits.")
            }
            Self.onMain { Task { await model.submitCode(code) } }
            return LoopbackHTTPServer.Response(status: 202, headers: Self.securityHeaders)
        case "/api/refresh":
            Self.onMain { Task { await model.refresh() } }
            return LoopbackHTTPServer.Response(status: 202, headers: Self.securityHeaders)
        default:
            return Self.problem(404, "No such call.")
        }
    }

    private func start(_ work: TestingDashboardModel.Work) -> LoopbackHTTPServer.Response {
        let model = self.model
        let started = Self.onMain { model.start(work) }
        return started
            ? LoopbackHTTPServer.Response(status: 202, headers: Self.securityHeaders)
            : Self.problem(409, "Something is running; wait for it to finish.")
    }

    /// Runs `body` on the main actor and waits for it (from a listener thread).
    static func onMain<T: Sendable>(_ body: @escaping @MainActor @Sendable () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox<T>()
        Task { @MainActor in
            result.value = body()
            done.signal()
        }
        done.wait()
        return result.value!
    }

    private final class ResultBox<T>: @unchecked Sendable {
        // Safe: written once before the semaphore is signalled, read after it is waited on.
        var value: T?
    }

    static func file(_ text: String, type: String) -> LoopbackHTTPServer.Response {
        LoopbackHTTPServer.Response(
            status: 200, headers: securityHeaders.merging(["Content-Type": type]) { $1 }, body: Data(text.utf8))
    }

    static func json(_ value: some Encodable) -> LoopbackHTTPServer.Response {
        let body = (try? Wire.encoder().encode(value)) ?? Data("{}".utf8)
        return LoopbackHTTPServer.Response(
            status: 200, headers: securityHeaders.merging(["Content-Type": "application/json"]) { $1 }, body: body)
    }

    static func problem(_ status: Int, _ detail: String) -> LoopbackHTTPServer.Response {
        let body = (try? JSONEncoder().encode(["status": "\(status)", "detail": detail])) ?? Data()
        return LoopbackHTTPServer.Response(
            status: status, headers: securityHeaders.merging(["Content-Type": "application/problem+json"]) { $1 },
            body: body)
    }
}

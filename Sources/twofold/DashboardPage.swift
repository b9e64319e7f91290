import Foundation
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldScenarios
import TwofoldScreens
import TwofoldTestingScreens

/// The dashboard's page and its small JSON interface, answered on the listener's threads: the
/// model lives on the main actor, so each request hops there and waits. Only this machine's
/// browser reaches it (127.0.0.1), and even so every call must name this server as its `Host`
/// (a DNS-rebinding page cannot) and carry the tab's key.
///
/// Keys are never in what the server serves. The command prints a link whose fragment (`#t=…`,
/// which no request carries) holds a startup key that works once: the first page to open it
/// trades it (`POST /api/session`) for the tab's key, which the tab keeps, and the link is dead
/// from then on. So neither another site's page nor another user of this machine (who can reach
/// 127.0.0.1 too, and may find the link later in a browser's history or command line) can drive
/// the dashboard.
final class DashboardPage: @unchecked Sendable {
    // Safe: `model` and `startupKey` are set once; `tabKey` is read and written under `lock`.
    let model: TestingDashboardModel
    /// The key the printed link carries, until a page trades it.
    let startupKey: String
    private let lock = NSLock()
    private var tabKey: String?

    init(model: TestingDashboardModel, startupKey: String) { (self.model, self.startupKey) = (model, startupKey) }

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
        // Only the printed address: `localhost` may reach another program on [::1] first.
        guard request.headers["host"] == "127.0.0.1:\(request.port)" else {
            return Self.problem(403, "This dashboard answers only at 127.0.0.1:\(request.port).")
        }
        switch (request.method, request.path) {
        case ("GET", "/"): return Self.file(Self.html, type: "text/html; charset=utf-8")
        case ("GET", "/dashboard.js"): return Self.file(Self.script, type: "text/javascript; charset=utf-8")
        case ("GET", "/dashboard.css"): return Self.file(Self.style, type: "text/css; charset=utf-8")
        case ("POST", "/api/session"):
            return trade(request.headers["x-dashboard-token"] ?? "")
        case (_, let path) where path.hasPrefix("/api/"):
            let key = lock.withLock { tabKey }
            guard let key, let given = request.headers["x-dashboard-token"],
                ConstantTime.equals(Array(given.utf8), Array(key.utf8))
            else {
                return Self.problem(403, Self.keyRefused)
            }
            return api(request)
        case (_, "/"), (_, "/dashboard.js"), (_, "/dashboard.css"):
            return Self.problem(405, "Only GET here.")
        default:
            return Self.problem(404, "No such page.")
        }
    }

    static let keyRefused =
        "This page's key is not the dashboard's: it was opened from another tab or an old link. "
        + "Restart `twofold dashboard` and open the link it prints."

    /// The startup key for the tab's key, once.
    private func trade(_ given: String) -> LoopbackHTTPServer.Response {
        let traded: String? = lock.withLock {
            guard tabKey == nil, ConstantTime.equals(Array(given.utf8), Array(startupKey.utf8)) else { return nil }
            let key = Self.newToken()
            tabKey = key
            return key
        }
        guard let traded else { return Self.problem(403, Self.keyRefused) }
        return Self.json(["key": traded])
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
        case "/api/stop":
            Self.onMain { model.stop() }
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

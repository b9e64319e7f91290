import Foundation
import Testing
import TwofoldAPI
import VaporTesting

@testable import TwofoldServer

/// Every error leaves as `application/problem+json` with a stable `code`, and bad input is a 4xx.
@Suite struct ProblemDocumentTests {
    struct Echo: Content {
        let name: String
        let count: Int
    }

    /// A route that decodes JSON, standing in for the API's request bodies.
    static let echoRoute: @Sendable (Application) throws -> Void = { app in
        app.post("test", "echo") { request async throws -> Echo in try request.content.decode(Echo.self) }
        app.get("test", "crash") { _ async throws -> String in
            throw NSError(domain: "internal detail: db password=hunter2", code: 7)
        }
    }

    @Test func unknownRouteIsANotFoundProblem() async throws {
        try await withTestApp { app in
            try await app.raw(.GET, "no/such/thing") { response in
                #expect(response.status == .notFound)
                #expect(response.headers.first(name: .contentType)?.hasPrefix("application/problem+json") == true)
                let problem = try response.problem()
                #expect(problem.code == "not_found")
                #expect(problem.status == 404)
                #expect(problem.type == "https://twofold.dev/problems/not_found")
            }
        }
    }

    @Test func wrongMethodIsMethodNotAllowedWithAllow() async throws {
        try await withTestApp { app in
            try await app.raw(.DELETE, API.Operations.health.path()) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers.first(name: .allow) == "GET")
                let problem = try response.problem()
                #expect(problem.code == "method_not_allowed")
            }
        }
    }

    @Test func malformedJSONIsABadRequest() async throws {
        try await withTestApp(routes: Self.echoRoute) { app in
            try await app.raw(
                .POST, "test/echo", headers: ["Content-Type": "application/json"],
                body: ByteBuffer(string: "{\"name\": \"x\", ")
            ) { response in
                #expect(response.status == .badRequest)
                let problem = try response.problem()
                #expect(problem.code == "malformed_request")
            }
        }
    }

    @Test func wrongTypesAndMissingFieldsFailValidationNamingTheField() async throws {
        try await withTestApp(routes: Self.echoRoute) { app in
            try await app.raw(
                .POST, "test/echo", headers: ["Content-Type": "application/json"],
                body: ByteBuffer(string: #"{"name": "x", "count": "many"}"#)
            ) { response in
                #expect(response.status == .unprocessableEntity)
                let problem = try response.problem()
                #expect(problem.code == "validation_failed")
                #expect(problem.errors?["count"] == "must be a number")
            }
            try await app.raw(
                .POST, "test/echo", headers: ["Content-Type": "application/json"],
                body: ByteBuffer(string: #"{"name": "x"}"#)
            ) { response in
                #expect(response.status == .unprocessableEntity)
                let problem = try response.problem()
                #expect(problem.errors?["count"] == "required")
            }
            try await app.raw(
                .POST, "test/echo", headers: ["Content-Type": "application/json"],
                body: ByteBuffer(string: "[1, 2]")
            ) { response in
                #expect(response.status == .unprocessableEntity)
            }
        }
    }

    @Test func unsupportedMediaTypeIsRefused() async throws {
        try await withTestApp(routes: Self.echoRoute) { app in
            try await app.raw(
                .POST, "test/echo", headers: ["Content-Type": "application/x-unknown"],
                body: ByteBuffer(string: "name=x")
            ) { response in
                #expect(response.status == .unsupportedMediaType)
                let problem = try response.problem()
                #expect(problem.code == "unsupported_media_type")
            }
        }
    }

    /// `decodeJSONBody` takes `application/json` in any case and with parameters, nothing else.
    @Test func aJSONBodyIsRecognisedByItsMediaTypeAlone() {
        for json in [
            "application/json", "Application/JSON; charset=utf-8", " application/json\t;x=y", "APPLICATION/JSON",
        ] {
            #expect(Request.isJSON(json), "\(json)")
        }
        for other in [
            "", "application/jsonx", "application/json+x", "text/json", "application/ json", "application/problem+json",
        ] {
            #expect(!Request.isJSON(other), "\(other)")
        }
    }

    /// The second step reads its JSON body with a shared decoder (`decodeJSONBody`): the same
    /// answers as `content.decode` gives elsewhere.
    @Test func theSecondStepsBodyIsReadAsEveryOtherBody() async throws {
        try await withTestApp { app in
            let cases: [(String, String, HTTPStatus, String)] = [
                ("application/json", "{\"tempToken\": ", .badRequest, "malformed_request"),
                ("application/json", #"{"tempToken": 5, "code": "123456"}"#, .unprocessableEntity, "validation_failed"),
                ("application/json", #"{"code": "123456"}"#, .unprocessableEntity, "validation_failed"),
                // Bytes after the object, a member of the wrong type.
                ("application/json", #"{"tempToken":"t","code":"123456"} x"#, .badRequest, "malformed_request"),
                (
                    "application/json", #"{"tempToken":"t","code":"123456","trustDevice":"yes"}"#,
                    .unprocessableEntity, "validation_failed"
                ),
                ("application/json", #"{"tempToken":null,"code":"123456"}"#, .unprocessableEntity, "validation_failed"),
                (
                    "Application/JSON; charset=utf-8", #"{"tempToken": "t", "code": "123456"}"#, .unauthorized,
                    "unauthorized"
                ),
                ("application/x-unknown", "tempToken=t", .unsupportedMediaType, "unsupported_media_type"),
            ]
            for (contentType, body, status, code) in cases {
                try await app.raw(
                    .POST, API.SecondStep.validateTOTP.path(), headers: ["Content-Type": contentType],
                    body: ByteBuffer(string: body)
                ) { response in
                    #expect(response.status == status, "\(contentType) \(body)")
                    let problem = try response.problem()
                    #expect(problem.code == code, "\(contentType) \(body)")
                }
            }
        }
    }

    @Test func oversizedBodyIsPayloadTooLarge() async throws {
        try await withTestApp(routes: Self.echoRoute) { app in
            let big = #"{"name": ""# + String(repeating: "a", count: 10_000) + #"", "count": 1}"#
            try await app.testing(method: .running(hostname: "127.0.0.1", port: 0)).test(
                .POST, "test/echo", headers: ["Content-Type": "application/json"], body: ByteBuffer(string: big)
            ) { response in
                #expect(response.status == .payloadTooLarge)
                let problem = try response.problem()
                #expect(problem.code == "payload_too_large")
            }
        }
    }

    @Test func internalErrorsHideTheirDetailsInProduction() async throws {
        try await withTestApp(mode: .production, routes: Self.echoRoute) { app in
            try await app.raw(.GET, "test/crash") { response in
                #expect(response.status == .internalServerError)
                let problem = try response.problem()
                #expect(problem.code == "internal_error")
                #expect(problem.detail?.contains("hunter2") == false)
                let requestID = try #require(response.headers.first(name: .xRequestId))
                #expect(problem.detail?.contains(requestID) == true)
            }
        }
    }

    @Test func requestIDIsEchoed() async throws {
        try await withTestApp { app in
            try await app.raw(.GET, API.Operations.health.path(), headers: ["X-Request-Id": "trace-123"]) {
                response in
                #expect(response.headers.first(name: .xRequestId) == "trace-123")
            }
            try await app.raw(.GET, API.Operations.health.path()) { response in
                #expect(response.headers.first(name: .xRequestId)?.isEmpty == false)
            }
        }
    }
}

/// A browser asking for a page outside `/api/` is answered with a page, refusals too; the API
/// answers problem documents whatever the client accepts; the cookies carry the attributes
/// `CookieRules` decides from where the server runs.
@Suite struct WebFacingTests {
    static let browser: HTTPHeaders = [
        "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "X-Forwarded-For": "10.9.9.9",
    ]

    @Test func aRefusedPageIsAPageAndTheAPIStaysJSON() async throws {
        try await withTestApp { app in
            // Every page a link reaches answers a page (or, signed out, the way to the sign-in
            // page), under the policy; a path that is no page, a page that says so.
            for page in Pages.all
            where page.method == .get && !page.path.contains("{") && !page.path.hasPrefix("assets/") {
                try await app.raw(.GET, page.href(), headers: Self.browser) { response in
                    #expect([.ok, .seeOther].contains(response.status), "\(page)")
                    guard response.status == .ok else {
                        #expect(response.headers.first(name: .location)?.hasPrefix("/?next=") == true, "\(page)")
                        return
                    }
                    #expect(response.headers.first(name: .contentType) == "text/html; charset=utf-8")
                    let csp = response.headers.first(name: "Content-Security-Policy") ?? ""
                    #expect(csp.contains("default-src 'none'") && !csp.contains("unsafe-inline"))
                    let html = response.body.string
                    #expect(html.hasPrefix("<!doctype html>") && html.contains("<h1>"), "\(page)")
                    #expect(!html.contains("<script>") && !html.contains("style="), "\(page)")
                }
            }
            try await app.raw(.GET, "no/such/page", headers: Self.browser) { response in
                #expect(response.status == .notFound)
                #expect(response.headers.first(name: .contentType) == "text/html; charset=utf-8")
                let csp = response.headers.first(name: "Content-Security-Policy") ?? ""
                #expect(csp.contains("default-src 'none'") && !csp.contains("unsafe-inline"))
                let html = response.body.string
                #expect(html.hasPrefix("<!doctype html>") && html.contains("<h1>Not found</h1>"))
                #expect(html.contains("(not_found)") && !html.contains("<script") && !html.contains("style="))
            }
            // The same path for a client that wants JSON, and an API path for a browser: problems.
            try await app.raw(.GET, "no/such/page", headers: .client("10.9.9.9")) { response in
                #expect(response.headers.first(name: .contentType)?.hasPrefix(Problem.mediaType) == true)
            }
            for path in ["api/v1/no/such/endpoint", "/api/v1/no/such/endpoint", "api/v1/auth/login"] {
                try await app.raw(.GET, path, headers: Self.browser) { response in
                    #expect(response.status.code >= 400)
                    #expect(response.headers.first(name: .contentType)?.hasPrefix(Problem.mediaType) == true, "\(path)")
                    #expect(response.headers.first(name: "X-Content-Type-Options") == "nosniff")
                }
            }
            // `q=0` refuses HTML.
            var noHTML = Self.browser
            noHTML.replaceOrAdd(name: .accept, value: "text/html;q=0, application/json")
            try await app.raw(.GET, "no/such/page", headers: noHTML) { response in
                #expect(response.headers.first(name: .contentType)?.hasPrefix(Problem.mediaType) == true)
            }
        }
    }

    @Test func pagesEscapeWhatTheyShow() {
        #expect(
            Markup.escape(#"<script>alert("x" & 'y')</script>"#)
                == "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;")
        let page = HTML.problemPage(
            Problem(status: 409, code: .conflict, title: "A <b>title</b>", detail: "\"quoted\" & <i>detail</i>"),
            requestID: "<id>"
        ).html
        #expect(!page.contains("<b>") && !page.contains("<i>") && !page.contains("<id>"))
        #expect(page.contains("A &lt;b&gt;title&lt;/b&gt; · Twofold"))
        // Marks that join a `<` or a quote into one Character do not hide it.
        #expect(Markup.escape("\u{0600}<meta>") == "\u{0600}&lt;meta&gt;")
        #expect(Markup.escape("\"\u{0301}x") == "&quot;\u{0301}x")
    }

    /// Markup escapes by type: text interpolated is text, wherever it goes (an element, an
    /// attribute, a number); only markup built the same way goes in as markup.
    @Test func markupEscapesTextByType() {
        let name = #"x" onmouseover="alert(1)"#
        let field: Markup = "<input value=\"\(name)\">"
        #expect(field.html == #"<input value="x&quot; onmouseover=&quot;alert(1)">"#)
        let inner: Markup = "<b>\(Substring("<i>"))</b>"
        let outer: Markup = "<p>\(inner) \(3) \("&")</p>"
        #expect(outer.html == "<p><b>&lt;i&gt;</b> 3 &amp;</p>")
        #expect([inner, inner].joined(separator: ", ").html == "<b>&lt;i&gt;</b>, <b>&lt;i&gt;</b>")
        var built = Markup.empty
        built += outer
        built += "<br>"
        #expect((built + inner).html == outer.html + "<br>" + inner.html)
    }

    @Test func cookiesAreSecureWithTheHostPrefixUnlessServedToLocalhostOverHTTP() {
        #expect(!CookieRules(origins: ["http://localhost:8080"], production: false).secure)
        #expect(!CookieRules(origins: ["http://127.0.0.1:8080", "http://[::1]:8080"], production: false).secure)
        #expect(CookieRules(origins: ["https://login.example.com"], production: false).secure)
        #expect(CookieRules(origins: ["http://localhost:8080", "https://login.example.com"], production: false).secure)
        #expect(CookieRules(origins: ["http://login.example.com"], production: false).secure, "plain HTTP elsewhere")
        for origin in [
            "http://localhost.evil.example", "http://127.0.0.2", "http://0.0.0.0", "http://user@localhost.evil",
        ] {
            #expect(CookieRules(origins: [origin], production: false).secure, "\(origin)")
        }
        #expect(CookieRules(origins: ["http://localhost:8080"], production: true).secure, "production is always Secure")
        #expect(CookieRules(origins: [], production: false).secure)
        let secure = CookieRules(secure: true)
        #expect(secure.trustedDevice == "__Host-twofold_trusted_device")
        #expect(secure.name(Wire.Cookie.session) == "__Host-twofold_session")
        let cookie = secure.cookie("token", lifetime: 60)
        #expect(cookie.isSecure && cookie.isHTTPOnly && cookie.path == "/" && cookie.sameSite == .strict)
        #expect(cookie.domain == nil && cookie.maxAge == 60)
        let local = CookieRules(secure: false)
        #expect(local.trustedDevice == "twofold_trusted_device" && !local.cookie("token", lifetime: 60).isSecure)
    }
}

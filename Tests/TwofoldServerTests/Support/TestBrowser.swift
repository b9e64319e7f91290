import Foundation
import Testing
import TwofoldAPI
import VaporTesting

@testable import TwofoldServer

/// A browser in the tests: its cookies, and forms posted as a browser posts them.
final class TestBrowser: @unchecked Sendable {
    // Safe: one test drives one browser, one request at a time.
    let app: Application
    var cookies: [String: String] = [:]
    var userAgent = "TestBrowser/1.0"
    var address = "10.7.0.1"

    init(_ app: Application) { self.app = app }

    struct Page {
        let status: HTTPStatus
        let headers: HTTPHeaders
        let body: String

        /// The CSRF token of the page's first form.
        var csrf: String? {
            guard let range = body.range(of: "name=\"csrf\" value=\"") else { return nil }
            return String(body[range.upperBound...].prefix { $0 != "\"" })
        }
    }

    private var headers: HTTPHeaders {
        var headers: HTTPHeaders = [
            "Accept": "text/html", "User-Agent": userAgent, "X-Forwarded-For": address, "Host": "localhost:8080",
        ]
        if !cookies.isEmpty {
            headers.add(name: .cookie, value: cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))
        }
        return headers
    }

    private func keep(_ response: TestingHTTPResponse) {
        for header in response.headers[.setCookie] {
            let pair = header.split(separator: ";")[0].split(
                separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2 else { continue }
            let (name, value) = (String(pair[0]), String(pair[1]))
            if value.isEmpty || header.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = value }
        }
    }

    func get(_ path: String) async throws -> Page {
        var page: Page?
        try await app.raw(.GET, path, headers: headers) { response in
            keep(response)
            page = Page(status: response.status, headers: response.headers, body: response.body.string)
        }
        return try #require(page)
    }

    func post(_ path: String, _ form: [String: String], extra: HTTPHeaders = [:]) async throws -> Page {
        var headers = headers
        headers.replaceOrAdd(name: .contentType, value: "application/x-www-form-urlencoded")
        for (name, value) in extra { headers.replaceOrAdd(name: name, value: value) }
        let body = form.map {
            "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
        }
        .joined(separator: "&")
        var page: Page?
        try await app.raw(.POST, path, headers: headers, body: ByteBuffer(string: body)) { response in
            keep(response)
            page = Page(status: response.status, headers: response.headers, body: response.body.string)
        }
        return try #require(page)
    }

    /// Calls the JSON API as the pages' script does: `json` as the body, the browser's cookies,
    /// and `extra` (its `X-CSRF-Token`).
    func postJSON(_ path: String, _ json: String = "{}", extra: HTTPHeaders = [:]) async throws -> Page {
        var headers = headers
        headers.replaceOrAdd(name: .contentType, value: Wire.json)
        headers.replaceOrAdd(name: .accept, value: Wire.json)
        for (name, value) in extra { headers.replaceOrAdd(name: name, value: value) }
        var page: Page?
        try await app.raw(.POST, path, headers: headers, body: ByteBuffer(string: json)) { response in
            keep(response)
            page = Page(status: response.status, headers: response.headers, body: response.body.string)
        }
        return try #require(page)
    }

    /// A new account `name` with an authenticator app, signed in with it in a new browser: the
    /// browser, the account's tokens, the app's secret and its backup codes.
    static func signedInWithTheApp(_ app: Application, clock: TestClock, _ name: String = "bob") async throws -> (
        browser: TestBrowser, tokens: AuthTokensResponse, secret: [UInt8], backupCodes: [String]
    ) {
        let tokens = try await Accounts.signUp(app, name)
        let (secret, codes) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
        let browser = TestBrowser(app)
        let second = try await browser.signIn(name)
        let signedIn = try await browser.secondStep(second, method: "totp", code: try TOTPSteps.code(secret, clock))
        #expect(signedIn.status == .seeOther)
        return (browser, tokens, secret, codes)
    }

    /// Signs in through the sign-in page with a password alone (an account with no factor).
    func signIn(_ account: String, password: String = Accounts.password) async throws -> Page {
        let form = try await get("/")
        return try await post("/", ["csrf": form.csrf ?? "", "account": account, "password": password])
    }

    /// Signs the administrator `account` in: the password, then a code from their
    /// authenticator app (administrators have one, issue V item 5).
    func signInAsAdministrator(_ account: String = "alice") async throws -> Page {
        let second = try await signIn(account)
        return try await secondStep(second, method: "totp", code: try await Administrators.freshCode(app, account))
    }

    /// Sends `code` by `method` on the second-step page `page` (the one `signIn` answered).
    func secondStep(_ page: Page, method: String, code: String) async throws -> Page {
        let flow = try #require(
            page.body.range(of: "name=\"flow\" value=\"").map {
                String(page.body[$0.upperBound...].prefix { $0 != "\"" })
            })
        return try await post(
            "/sign-in/verify",
            ["csrf": page.csrf ?? "", "flow": flow, "method": method, "methods": "totp,backup", "code": code])
    }
}

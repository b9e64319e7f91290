import Foundation
import TwofoldAPI
import Vapor

/// The HTML the server writes for browsers (`Pages`): made of `Markup`, which escapes text by
/// type, and every page carries a Content-Security-Policy with no inline script or style, so a page can
/// run only what the server serves as a file.
enum HTML {
    /// The policy of every page: nothing from elsewhere, no inline script or style, no framing,
    /// forms posted back here only.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// A whole document: `title` and `main`; `nav`, the links of the header; `script` loads the
    /// pages' one script (passkeys need it; times in the person's zone and countdowns use it;
    /// the pages work without it). `now`, the server's time, is what the script says times
    /// relative to ("5 minutes ago"), whatever the browser's clock says.
    static func document(
        title: String, main: Markup, nav: Markup = .empty, script: Bool = false, now: Date? = nil
    ) -> Markup {
        let scriptTag: Markup = script ? "<script src=\"\(Pages.script.href())\" defer></script>\n" : .empty
        let body: Markup = now.map { "<body data-now=\"\(PageTime.machine($0))\">" } ?? "<body>"
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · Twofold</title>
            <link rel="stylesheet" href="\(Pages.stylesheet.href())">
            \(scriptTag)</head>
            \(body)
            <a class="skip" href="#main">Skip to the content</a>
            <header><nav aria-label="Main"><a class="brand" href="/">Twofold</a>\(nav)</nav></header>
            <main id="main">
            \(main)
            </main>
            </body>
            </html>

            """
    }

    /// A refusal as a person reads it: the problem's title and detail, what to do about a
    /// throttle, and the request id an operator can find in the log.
    static func problemPage(_ problem: Problem, requestID: String) -> Markup {
        var main: Markup = "<h1>\(problem.title)</h1>\n"
        if let detail = problem.detail { main += "<p role=\"alert\">\(detail)</p>\n" }
        if let retryAfter = problem.retryAfter {
            main += "<p>Try again in \(retryAfter) seconds.</p>\n"
        }
        main += "<p>Error \(problem.status) (\(problem.code.rawValue)), request \(requestID).</p>\n"
        main += "<p><a href=\"/\">\(Pages.signIn.title)</a></p>"
        return document(title: problem.title, main: main)
    }

    /// Whether `request` is a browser's request for a page, which is answered in HTML also when
    /// refused: outside `/api/` as the router reads the path (empty segments dropped, so
    /// `//api/…` is the API too), and accepting `text/html` (not with `q=0`).
    static func wantsPage(_ request: Request) -> Bool {
        guard request.url.path.split(separator: "/").first != "api" else { return false }
        return request.headers[.accept].flatMap { $0.split(separator: ",") }.contains { range in
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.first == "text/html" else { return false }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return quality > 0
        }
    }
}

extension Request {
    /// The path as the router reads it: empty segments dropped, no leading slash (`api/v1/…`),
    /// so `//account/x` is `account/x` here as it is to the routes.
    var routedPath: String { url.path.split(separator: "/").joined(separator: "/") }
}

extension Response {
    /// A file a person downloads and no browser renders in this server's origin (a recovery
    /// document): an attachment of its type, `nosniff`, a sandboxing policy, never cached.
    static func attachment(_ file: FileContents) -> Response {
        Response(
            status: .ok,
            headers: [
                "Content-Type": file.contentType, "Content-Disposition": "attachment",
                "X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox; default-src 'none'",
                "Cache-Control": "no-store",
            ], body: .init(data: file.data))
    }

    /// `html` as a page, with the pages' security headers.
    static func page(_ html: Markup, status: HTTPResponseStatus = .ok, headers: HTTPHeaders = [:]) -> Response {
        var headers = headers
        headers.replaceOrAdd(name: .contentType, value: "text/html; charset=utf-8")
        headers.replaceOrAdd(name: "Content-Security-Policy", value: HTML.contentSecurityPolicy)
        headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
        headers.replaceOrAdd(name: "Referrer-Policy", value: "same-origin")
        headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return Response(status: status, headers: headers, body: .init(string: html.html))
    }
}

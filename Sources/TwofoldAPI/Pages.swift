import Foundation

/// A page the server renders for a browser (`API.md` "Web pages"), beside the JSON endpoints of
/// `API`: its path from the root and what a person calls it. Pages live outside `/api/`; a
/// refusal on one is answered as an HTML page, not a problem document.
public struct Page: Sendable, Hashable, CustomStringConvertible {
    /// The path from the root, without its leading slash (`""` is the root).
    public let path: String
    /// The page's title, as its `<title>` and headings name it.
    public let title: String

    public init(_ path: String, title: String) {
        precondition(!path.hasPrefix("/") && !path.hasPrefix("api/"), "a page's path is relative and outside /api/")
        self.path = path
        self.title = title
    }

    /// The route, as `Endpoint.route` writes one (`GET /account/security`).
    public var route: String { "GET /\(path)" }
    public var description: String { route }

    /// The page's URL under `base` (a server's root).
    public func url(relativeTo base: URL) -> URL {
        path.isEmpty ? base : base.appendingPathComponent(path)
    }
}

/// Every page, defined once: the server registers each from here, and a test checks that the
/// routes it serves are `API.all` and these, and nothing else. The sign-in page is the root.
public enum Pages {
    public static let signIn = Page("", title: "Sign in")
    public static let accountSecurity = Page("account/security", title: "Account security")
    public static let recovery = Page("recovery", title: "Account recovery")
    /// The approved pass, from the link in its email (`?token=`): signs in once.
    public static let recoveryPass = Page("recovery/pass", title: "Recover your account")
    /// "This wasn't me", from the link in every recovery notice (`?token=`).
    public static let recoveryCancel = Page("recovery/cancel", title: "Cancel account recovery")
    public static let admin = Page("admin", title: "Administration")

    public static let all: [Page] = [signIn, accountSecurity, recovery, recoveryPass, recoveryCancel, admin]
}

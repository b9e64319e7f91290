@preconcurrency import RoutingKit
import Vapor

/// Finds each request's route and answers through the middleware, as Vapor's own responder does
/// (the same routes and middleware, HEAD falling back to GET). A request no route matches goes to
/// Vapor's own responder, which answers `RouteNotFound` through the middleware (a problem document).
///
/// What it does differently is read the path. Vapor's router lookup splits `URI.path` by
/// `Character`; here an origin-form target without `%` has its path split on its bytes, and any
/// other request target is read through `URI.path`, exactly as Vapor reads it. (Reading the
/// target still costs one Foundation `replacingOccurrences`, bridged to `NSString`: on Linux
/// `URI.string`, like `URI.path`, works around `URLComponents` escaping `;`. That is ~1.5 % of a
/// sign-in's CPU, and Vapor keeps no other copy of the target.)
struct RouteResponder: Responder {
    private struct Found {
        let route: Route
        let responder: any Responder
    }

    private let router: TrieRouter<Found>
    private let unmatched: any Responder

    /// The application's routes and middleware, as they are when the server starts.
    init(_ application: Application) {
        self.init(
            routes: application.routes, middleware: application.middleware.resolve(),
            unmatched: application.responder.default)
    }

    init(routes: Routes, middleware: [any Middleware], unmatched: any Responder) {
        let router = TrieRouter(
            Found.self, options: routes.caseInsensitive ? [.caseInsensitive] : [])
        for route in routes.all {
            // Empty constant components never match (paths are split without them).
            let path = route.path.filter {
                if case .constant(let text) = $0 { return !text.isEmpty }
                return true
            }
            router.register(
                Found(route: route, responder: middleware.makeResponder(chainingTo: route.responder)),
                at: [.constant(route.method.rawValue)] + path)
        }
        self.router = router
        self.unmatched = unmatched
    }

    func respond(to request: Request) -> EventLoopFuture<Response> {
        let path = Self.components(of: request.url)
        let found =
            router.route(path: [request.method.rawValue] + path, parameters: &request.parameters)
            ?? (request.method == .HEAD
                ? router.route(path: [HTTPMethod.GET.rawValue] + path, parameters: &request.parameters) : nil)
        guard let found else { return unmatched.respond(to: request) }
        request.route = found.route
        return found.responder.respond(to: request)
    }

    /// The path's non-empty components, as Vapor's router is given them (`URI.path` split at
    /// `/`): still percent-encoded, but for `%3B`, which `URI.path` reads as `;`.
    static func components(of url: URI) -> [String] {
        let target = url.string
        // An origin-form target ("/a/b?c"): its path runs to the query or fragment. Anything
        // else (absolute form, a path that starts "//" and so names a host, percent escapes)
        // is read as Vapor reads it.
        guard target.utf8.first == UInt8(ascii: "/"), !target.utf8.starts(with: "//".utf8),
            !target.utf8.contains(UInt8(ascii: "%"))
        else {
            return url.path.split(separator: "/").map(String.init)
        }
        let path = target.utf8.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        return path.split(separator: UInt8(ascii: "/")).map { String(Substring($0)) }
    }
}

import Foundation

/// An HTTP method an endpoint answers.
public enum HTTPVerb: String, Sendable, CaseIterable, Codable {
    case get = "GET"
    case post = "POST"
    case put = "PUT"
    case patch = "PATCH"
    case delete = "DELETE"
}

/// Who may call an endpoint.
public enum EndpointAccess: String, Sendable, Codable {
    /// Anyone; the body (a password, a flow token, a signature) proves what it must.
    case anyone
    /// A signed-in user: `Authorization: Bearer <access token>`.
    case signedIn
    /// A signed-in administrator.
    case admin
}

/// The body of an endpoint that takes none, or the answer of one whose answer carries nothing a
/// client reads (a document that is not JSON, such as `/metrics`).
public struct NoContent: Codable, Sendable, Equatable {
    public init() {}
}

/// A piece of an endpoint's path: a constant, or the name of a parameter (`{name}`).
public enum EndpointComponent: Sendable, Hashable {
    case constant(String)
    case parameter(String)

    /// The pieces of a path template: `{name}` is a parameter, anything else a constant.
    public static func parse(_ template: String) -> [EndpointComponent] {
        template.split(separator: "/").map { piece in
            piece.hasPrefix("{") && piece.hasSuffix("}")
                ? .parameter(String(piece.dropFirst().dropLast())) : .constant(String(piece))
        }
    }

    /// The parameter's name, for a parameter.
    public var parameterName: String? {
        if case .parameter(let name) = self { name } else { nil }
    }
}

/// What every endpoint of `API` is: a method, a path from the server's root, who may call it,
/// the statuses that mean success, what it takes and what it answers. Defined once, in `API`:
/// the server registers its handlers from these definitions, and the tests and clients build
/// their requests from them, so neither can drift from the other.
public protocol EndpointDefinition: Sendable, CustomStringConvertible {
    associatedtype Body: Sendable
    associatedtype Answer: Sendable
    var method: HTTPVerb { get }
    /// The path from the server's root, `{name}` for a parameter: `api/v1/admin/users/{userID}`.
    var template: String { get }
    var access: EndpointAccess { get }
    /// The statuses of a successful answer (`200`, `201` for a registration, `202` for a code sent).
    var success: Set<Int> { get }
}

extension EndpointDefinition {
    public var components: [EndpointComponent] { EndpointComponent.parse(template) }

    /// The endpoint without its types, for listing and comparing.
    public var erased: AnyEndpoint {
        AnyEndpoint(
            method: method, template: template, access: access, body: String(describing: Body.self),
            answer: String(describing: Answer.self), bodyType: Body.self, answerType: Answer.self)
    }

    public var description: String { "\(method.rawValue) /\(template)" }

    /// The path with `value` (percent-encoded as one path segment) in its parameter, if it has one.
    func filled(with value: String?) -> String { Escaping.path(components, value: value) }

    /// The endpoint's URL under `base` (which may carry a path of its own, such as
    /// `https://example.com/twofold/`): `path` appended to it as is (already escaped, once), and
    /// `query` percent-encoded (`+`, `&` and `=` included, so no server reads them as anything
    /// but themselves).
    func url(relativeTo base: URL, path: String, query: [URLQueryItem]) -> URL {
        endpointURL(relativeTo: base, path: path, query: query)
    }
}

/// `path` (already escaped, once) appended to `base`'s own path, and `query` percent-encoded.
func endpointURL(relativeTo base: URL, path: String, query: [URLQueryItem]) -> URL {
    guard var parts = URLComponents(url: base, resolvingAgainstBaseURL: true) else { return base }
    var prefix = parts.percentEncodedPath
    if !prefix.hasSuffix("/") { prefix += "/" }
    parts.percentEncodedPath = prefix + path
    let items = query.compactMap { item in
        item.value.map {
            Escaping.escaped(item.name, allowing: Escaping.queryCharacters) + "="
                + Escaping.escaped($0, allowing: Escaping.queryCharacters)
        }
    }
    parts.percentEncodedQuery = items.isEmpty ? nil : items.joined(separator: "&")
    parts.fragment = nil
    return parts.url ?? base
}

/// Percent-escapes of path segments and query items.
enum Escaping {
    static func escaped(_ text: String, allowing allowed: CharacterSet) -> String {
        text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// What a path segment may hold without escaping (RFC 3986 `pchar` less `:`, `@`, and the
    /// `&`, `+`, `=` and `;` some servers and proxies read in a path).
    static let segmentCharacters = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$'()*,")

    /// What a query name or value may hold without escaping: RFC 3986's unreserved characters.
    static let queryCharacters = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// `value` as one path segment: escaped, and `.` or `..` spelled `%2E`, which no client,
    /// proxy or server may take for a step in the path.
    static func segment(_ value: String) -> String {
        value == "." || value == ".."
            ? String(repeating: "%2E", count: value.count) : escaped(value, allowing: segmentCharacters)
    }

    /// `components` joined into a path, `value` escaped as one segment in each parameter.
    static func path(_ components: [EndpointComponent], value: String?) -> String {
        components.map { component in
            switch component {
            case .constant(let text): text
            case .parameter: segment(value ?? "")
            }
        }.joined(separator: "/")
    }
}

/// An endpoint whose path is constant.
public struct Endpoint<Body: Sendable, Answer: Sendable>: EndpointDefinition {
    public let method: HTTPVerb
    public let template: String
    public let access: EndpointAccess
    public let success: Set<Int>

    /// `template` has no parameter (one with a parameter is a `ResourceEndpoint`).
    public init(_ method: HTTPVerb, _ template: String, _ access: EndpointAccess, success: Set<Int> = [200]) {
        precondition(
            EndpointComponent.parse(template).allSatisfy { $0.parameterName == nil },
            "\(template) has a parameter: define it as a ResourceEndpoint")
        (self.method, self.template, self.access, self.success) = (method, template, access, success)
    }

    /// The path from the server's root.
    public func path() -> String { template }

    /// The path with its leading slash, as a page links to it (the pages' script calls it).
    public func href() -> String { "/" + template }

    /// The endpoint's URL under `base`, with `query` (the admin lists' filters and pages).
    public func url(relativeTo base: URL, query: [URLQueryItem] = []) -> URL {
        url(relativeTo: base, path: template, query: query)
    }
}

/// An endpoint whose path names one resource: one `{name}` in its template, given to `path(_:)`
/// (so a caller cannot give too few values, or too many).
public struct ResourceEndpoint<Body: Sendable, Answer: Sendable>: EndpointDefinition {
    public let method: HTTPVerb
    public let template: String
    public let access: EndpointAccess
    public let success: Set<Int>
    /// The parameter's name.
    public let parameter: String

    /// `template` has exactly one parameter.
    public init(_ method: HTTPVerb, _ template: String, _ access: EndpointAccess, success: Set<Int> = [200]) {
        (self.method, self.template, self.access, self.success) = (method, template, access, success)
        let names = EndpointComponent.parse(template).compactMap(\.parameterName)
        precondition(names.count == 1, "\(template) must name exactly one parameter")
        parameter = names[0]
    }

    /// The path from the server's root with `value` in the parameter, percent-encoded as one
    /// path segment (a `/` in it stays inside the segment).
    public func path(_ value: String) -> String { filled(with: value) }

    /// The endpoint's URL under `base` for `value`.
    public func url(relativeTo base: URL, _ value: String, query: [URLQueryItem] = []) -> URL {
        url(relativeTo: base, path: path(value), query: query)
    }
}

/// An endpoint's method, path, access and type names.
public struct AnyEndpoint: Sendable, Hashable, CustomStringConvertible {
    public let method: HTTPVerb
    public let template: String
    public let access: EndpointAccess
    public let body: String
    public let answer: String
    /// The body's and the answer's types, for checks that read them (what members they
    /// decode and encode).
    public let bodyType: any Sendable.Type
    public let answerType: any Sendable.Type

    init(
        method: HTTPVerb, template: String, access: EndpointAccess, body: String, answer: String,
        bodyType: any Sendable.Type, answerType: any Sendable.Type
    ) {
        (self.method, self.template, self.access, self.body, self.answer) = (method, template, access, body, answer)
        (self.bodyType, self.answerType) = (bodyType, answerType)
    }

    public static func == (lhs: AnyEndpoint, rhs: AnyEndpoint) -> Bool {
        lhs.route == rhs.route && lhs.access == rhs.access && lhs.body == rhs.body && lhs.answer == rhs.answer
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(route) }

    /// The endpoint's URL under `base`, `value` in its parameter if it has one (for checks that
    /// walk every endpoint; a client calls the typed endpoints).
    public func url(relativeTo base: URL, _ value: String? = nil, query: [URLQueryItem] = []) -> URL {
        endpointURL(
            relativeTo: base, path: Escaping.path(EndpointComponent.parse(template), value: value), query: query)
    }

    /// `METHOD /path` with `{name}` parameters: what identifies a route.
    public var route: String { "\(method.rawValue) /\(template)" }
    public var description: String { route }
}

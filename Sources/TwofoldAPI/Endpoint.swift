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

/// One endpoint of the server: method, path, who may call it, what it takes and what it answers.
/// Defined once, in `API`: the server registers its handlers from these definitions, and the
/// tests and the SDK build their requests from them, so neither can drift from the other.
public struct Endpoint<Body: Sendable, Answer: Sendable>: Sendable, CustomStringConvertible {
    public let method: HTTPVerb
    /// The path from the server's root, `{name}` for a parameter: `api/v1/admin/users/{userID}`.
    public let template: String
    public let access: EndpointAccess

    /// The path's components, each a constant or a parameter.
    public enum Component: Sendable, Hashable {
        case constant(String)
        case parameter(String)
    }

    public init(_ method: HTTPVerb, _ template: String, _ access: EndpointAccess) {
        self.method = method
        self.template = template
        self.access = access
    }

    public var components: [Component] {
        template.split(separator: "/").map { piece in
            piece.hasPrefix("{") && piece.hasSuffix("}")
                ? .parameter(String(piece.dropFirst().dropLast())) : .constant(String(piece))
        }
    }

    /// The path with `arguments` in its parameters, in order, each percent-encoded as a path
    /// segment. A constant path needs none.
    public func path(_ arguments: String...) -> String {
        var remaining = arguments[...]
        let segments = components.map { component -> String in
            switch component {
            case .constant(let text):
                return text
            case .parameter(let name):
                guard let value = remaining.popFirst() else {
                    preconditionFailure("\(template) needs a value for {\(name)}")
                }
                return value.addingPercentEncoding(withAllowedCharacters: Self.segmentCharacters) ?? value
            }
        }
        precondition(remaining.isEmpty, "\(template) takes \(arguments.count - remaining.count) values")
        return segments.joined(separator: "/")
    }

    /// What a path segment may hold without escaping (RFC 3986 `pchar` less `:` and `@`).
    private static var segmentCharacters: CharacterSet {
        CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=")
    }

    /// The endpoint without its types, for listing and comparing.
    public var erased: AnyEndpoint {
        AnyEndpoint(
            method: method, template: template, access: access, body: String(describing: Body.self),
            answer: String(describing: Answer.self), bodyType: Body.self, answerType: Answer.self)
    }

    public var description: String { "\(method.rawValue) /\(template)" }
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

    /// `METHOD /path` with `{name}` parameters: what identifies a route.
    public var route: String { "\(method.rawValue) /\(template)" }
    public var description: String { route }
}

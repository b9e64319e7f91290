import Foundation

/// The query of an endpoint that takes one: the items a client sends, and the same type read
/// back from a request's items by the server, with the same rules on both sides.
public protocol EndpointQuery: Sendable {
    /// The query as items, in a stable order; absent values are left out.
    var items: [URLQueryItem] { get }
    /// Reads `items` (each name at most once), or throws `QueryRefusal` naming every bad field.
    init(items: [URLQueryItem]) throws(QueryRefusal)
}

/// Why a query was refused: a message per parameter, as a problem document's `errors` holds them.
public struct QueryRefusal: Error, Sendable, Equatable {
    public let errors: [String: String]
    public init(_ errors: [String: String]) { self.errors = errors }
}

/// `?limit=` (1–200, default 50) and `?offset=` (0–1,000,000, default 0) of the admin lists. A
/// value that is not a whole number in range is refused, never read as the default.
public struct PageQuery: EndpointQuery, Equatable {
    public static let limits = 1...200
    public static let offsets = 0...1_000_000
    public static let defaultLimit = 50

    public var limit: Int?
    public var offset: Int?

    public init(limit: Int? = nil, offset: Int? = nil) {
        (self.limit, self.offset) = (limit, offset)
    }

    /// The rows asked for.
    public var range: Range<Int> {
        let start = offset ?? 0
        return start..<(start + (limit ?? Self.defaultLimit))
    }

    public var items: [URLQueryItem] {
        [("limit", limit), ("offset", offset)].compactMap { name, value in
            value.map { URLQueryItem(name: name, value: String($0)) }
        }
    }

    public init(items: [URLQueryItem]) throws(QueryRefusal) {
        let query = try QueryItems(items, reading: ["limit", "offset"])
        var errors: [String: String] = [:]
        func integer(_ name: String, in allowed: ClosedRange<Int>) -> Int? {
            guard let text = query.values[name] else { return nil }
            guard let value = Int(text), allowed.contains(value) else {
                errors[name] = "must be a whole number from \(allowed.lowerBound) to \(allowed.upperBound)"
                return nil
            }
            return value
        }
        limit = integer("limit", in: Self.limits)
        offset = integer("offset", in: Self.offsets)
        guard errors.isEmpty else { throw QueryRefusal(errors) }
    }
}

/// `GET /admin/audit`'s filters: the user, the event type, and the page.
public struct AuditQuery: EndpointQuery, Equatable {
    public var userId: UUID?
    /// An audit event type (`login.succeeded`, …), 1 to 64 characters.
    public var type: String?
    /// Events at or after `from` and before `to` (ISO-8601 date-times).
    public var from: Date?
    public var to: Date?
    public var page: PageQuery

    public init(
        userId: UUID? = nil, type: String? = nil, from: Date? = nil, to: Date? = nil, page: PageQuery = PageQuery()
    ) {
        (self.userId, self.type, self.from, self.to, self.page) = (userId, type, from, to, page)
    }

    public var items: [URLQueryItem] {
        var items: [URLQueryItem] = []
        if let userId { items.append(URLQueryItem(name: "userId", value: userId.uuidString)) }
        if let type { items.append(URLQueryItem(name: "type", value: type)) }
        if let from { items.append(URLQueryItem(name: "from", value: Self.text(from))) }
        if let to { items.append(URLQueryItem(name: "to", value: Self.text(to))) }
        return items + page.items
    }

    static func text(_ date: Date) -> String {
        ISO8601DateFormatter.string(from: date, timeZone: .gmt, formatOptions: [.withInternetDateTime])
    }

    /// An ISO-8601 date-time (`2026-11-26T10:00:00Z`), or a date alone (its midnight, UTC).
    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        for options in [
            formatter.formatOptions, [.withInternetDateTime, .withFractionalSeconds], [.withFullDate],
        ] as [ISO8601DateFormatter.Options] {
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    public init(items: [URLQueryItem]) throws(QueryRefusal) {
        let query = try QueryItems(items, reading: ["userId", "type", "from", "to"])
        var errors: [String: String] = [:]
        do {
            page = try PageQuery(items: items)
        } catch {
            page = PageQuery()
            errors.merge(error.errors) { $1 }
        }
        userId = query.values["userId"].flatMap { text in
            guard let id = UUID(uuidString: text) else {
                errors["userId"] = "must be a user's id (a UUID)"
                return nil
            }
            return id
        }
        type = query.values["type"].flatMap { text in
            guard (1...64).contains(text.unicodeScalars.count) else {
                errors["type"] = "must be 1 to 64 characters, an audit event type"
                return nil
            }
            return text
        }
        func date(_ name: String) -> Date? {
            query.values[name].flatMap { text in
                guard text.count <= 40, let date = Self.date(text) else {
                    errors[name] = "must be an ISO-8601 date or date-time, like 2026-11-26T10:00:00Z"
                    return nil
                }
                return date
            }
        }
        from = date("from")
        to = date("to")
        guard errors.isEmpty else { throw QueryRefusal(errors) }
    }
}

/// `GET /admin/users`: a search over usernames and email addresses (`q`, 1 to 254
/// characters, matched anywhere, case-insensitively), and a page.
public struct UserQuery: EndpointQuery, Equatable {
    public var q: String?
    public var page: PageQuery

    public init(q: String? = nil, page: PageQuery = PageQuery()) {
        (self.q, self.page) = (q, page)
    }

    public var items: [URLQueryItem] {
        (q.map { [URLQueryItem(name: "q", value: $0)] } ?? []) + page.items
    }

    public init(items: [URLQueryItem]) throws(QueryRefusal) {
        let query = try QueryItems(items, reading: ["q"])
        var errors: [String: String] = [:]
        do {
            page = try PageQuery(items: items)
        } catch {
            page = PageQuery()
            errors.merge(error.errors) { $1 }
        }
        q = query.values["q"].flatMap { text in
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { return nil }
            guard trimmed.unicodeScalars.count <= 254 else {
                errors["q"] = "must be at most 254 characters"
                return nil
            }
            return trimmed
        }
        guard errors.isEmpty else { throw QueryRefusal(errors) }
    }
}

/// Query items by name. A name a query reads that is given twice is refused (which value
/// counts would be a guess).
struct QueryItems {
    private let all: [String: [String]]
    let values: [String: String]

    init(_ items: [URLQueryItem], reading names: [String]) throws(QueryRefusal) {
        all = Dictionary(grouping: items, by: \.name).mapValues { $0.map { $0.value ?? "" } }
        var values: [String: String] = [:]
        var errors: [String: String] = [:]
        for name in names {
            guard let given = all[name] else { continue }
            if given.count == 1 { values[name] = given[0] } else { errors[name] = "must be given once" }
        }
        guard errors.isEmpty else { throw QueryRefusal(errors) }
        self.values = values
    }
}

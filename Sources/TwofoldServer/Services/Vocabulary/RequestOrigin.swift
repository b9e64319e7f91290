/// Where a request came from, as the audit log and remembered devices record it.
struct RequestOrigin: Sendable, Equatable {
    var address: String?
    var userAgent: String?

    static let none = RequestOrigin(address: nil, userAgent: nil)
}

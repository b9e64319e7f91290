import Foundation
import Testing
import TwofoldAPI

/// The admin lists' queries: what a client writes, the server reads back, by the same rules.
@Suite struct QueryTests {
    @Test func aQueryReadsBackWhatItWrites() throws {
        let id = UUID()
        let query = AuditQuery(userId: id, type: "login.failed", page: PageQuery(limit: 20, offset: 40))
        #expect(try AuditQuery(items: query.items) == query)
        #expect(query.page.range == 40..<60)
        #expect(PageQuery().range == 0..<50, "the defaults")
        #expect(PageQuery().items.isEmpty)
    }

    @Test func everyBadParameterIsNamedAtOnce() {
        let items = [
            URLQueryItem(name: "limit", value: "500"), URLQueryItem(name: "offset", value: "-1"),
            URLQueryItem(name: "userId", value: "nobody"),
            URLQueryItem(name: "type", value: String(repeating: "t", count: 65)),
            URLQueryItem(name: "from", value: "yesterday"),
        ]
        #expect(throws: QueryRefusal.self) { try AuditQuery(items: items) }
        do {
            _ = try AuditQuery(items: items)
        } catch {
            #expect(Set(error.errors.keys) == ["limit", "offset", "userId", "type", "from"])
            #expect(error.errors["limit"] == "must be a whole number from 1 to 200")
        }
    }

    @Test func aParameterGivenTwiceIsRefusedAndUnknownOnesIgnored() throws {
        #expect(throws: QueryRefusal(["limit": "must be given once"])) {
            try PageQuery(items: [URLQueryItem(name: "limit", value: "1"), URLQueryItem(name: "limit", value: "2")])
        }
        let ignored = try PageQuery(items: [URLQueryItem(name: "x", value: "1"), URLQueryItem(name: "x", value: "2")])
        #expect(ignored == PageQuery())
    }
}

import Fluent
import Foundation
import Testing
import TwofoldAPI
import TwofoldCore
import TwofoldSQLite
import VaporTesting

@testable import TwofoldServer

@Suite(.tags(.database)) struct AdminTests {
    @Test func nonAdminsAreForbidden() async throws {
        try await withTestApp { app in
            let bob = try await Accounts.signUp(app, "bob")
            for path in [API.Admin.users.path(), API.Admin.audit.path(), API.Admin.user.path("\(bob.user.id)")] {
                try await app.testing().test(.GET, path, headers: .bearer(bob.accessToken.token)) { response in
                    #expect(response.status == .forbidden, "\(path)")
                }
                try await app.testing().test(.GET, path) { response in
                    #expect(response.status == .unauthorized, "\(path)")
                }
            }
        }
    }

    @Test func adminsListUsersSeeDetailsUnlockAndReadTheAuditTrail() async throws {
        try await withTestApp { app in
            let admin = try await Administrators.adminTokens(app)
            let bob = try await Accounts.signUp(app, "bob")
            #expect(try await app.twofold.users.lock(userID: bob.user.id, now: Date()))

            try await app.testing().test(.GET, API.Admin.users.path(), headers: .bearer(admin.accessToken.token)) {
                response in
                #expect(response.status == .ok)
                try #require(try response.decode(AdminUsersResponse.self).users.map(\.username) == ["alice", "bob"])
            }
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("10.0.0.5"),
                body: json(["username": "bob", "password": Accounts.password])
            ) { response in
                #expect(response.status == .forbidden)
                try #require(try response.problem().code == "account_locked")
            }
            try await app.testing().test(
                .POST, API.Admin.unlock.path("\(bob.user.id)"), headers: .bearer(admin.accessToken.token)
            ) { response in
                #expect(response.status == .ok)
                try #require(try response.decode(UserDTO.self).status == "active")
            }
            try await app.testing().test(
                .GET, API.Admin.user.path("\(bob.user.id)"), headers: .bearer(admin.accessToken.token)
            ) {
                response in
                let detail = try response.decode(AdminUserDetail.self)
                #expect(detail.user.username == "bob")
                #expect(detail.sessions.count == 1)
                #expect(detail.audit.contains { $0.type == "admin.user_unlocked" && $0.actorId == admin.user.id })
            }
            try await app.testing().test(
                .GET, "api/v1/admin/audit?type=login.succeeded", headers: .bearer(admin.accessToken.token)
            ) { response in
                let events = try response.decode(AuditEventsResponse.self).events
                #expect(events.count == 3)  // alice twice (before and after becoming admin), bob once
                #expect(events.allSatisfy { $0.ipAddress == "10.0.0.1" })
            }
            try await app.testing().test(
                .GET, API.Admin.user.path("\(UUID())"), headers: .bearer(admin.accessToken.token)
            ) {
                response in #expect(response.status == .notFound)
            }
            try await app.testing().test(.GET, "api/v1/admin/users?limit=0", headers: .bearer(admin.accessToken.token))
            {
                response in #expect(response.status == .unprocessableEntity)
            }
            // A parameter that is not what the document says is refused, never read as its
            // default or as "no filter" (schemathesis found each of these accepted).
            let refused: [(String, String)] = [
                (API.Admin.users.path() + "?offset=null", "offset"),
                (API.Admin.users.path() + "?offset=1&offset=2", "offset"),
                (API.Admin.users.path() + "?offset=1000001", "offset"),
                (API.Admin.users.path() + "?limit=201", "limit"),
                (API.Admin.audit.path() + "?userId=", "userId"),
                (API.Admin.audit.path() + "?userId=alice", "userId"),
                (API.Admin.audit.path() + "?type=", "type"),
                (API.Admin.audit.path() + "?from=", "from"),
                (API.Admin.audit.path() + "?type=" + String(repeating: "t", count: 65), "type"),
                (API.Admin.audit.path() + "?from=yesterday", "from"),
                (API.Admin.audit.path() + "?to=2026-13-40", "to"),
            ]
            for (path, field) in refused {
                try await app.testing().test(.GET, path, headers: .bearer(admin.accessToken.token)) { response in
                    #expect(response.status == .unprocessableEntity, "\(path)")
                    let problem = try response.problem()
                    #expect(problem.errors?[field] != nil, "\(path): \(problem.errors ?? [:])")
                }
            }
            try await app.testing().test(
                .GET, API.Admin.users.path() + "?offset=1000000&limit=200", headers: .bearer(admin.accessToken.token)
            ) { response in
                #expect(response.status == .ok)
                let page = try response.decode(AdminUsersResponse.self)
                #expect(page.users.isEmpty)
            }
        }
    }
}

@Suite(.tags(.database)) struct AdminSearchTests {
    @Test func usersAreFoundByNameOrAddressAndEventsByTime() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            _ = try await Accounts.signUp(app, "bob_smith")
            clock.advance(by: 3600)
            _ = try await Accounts.signUp(app, "carol")
            let admin = try await Administrators.adminTokens(app)
            for (query, names) in [
                ("BOB", ["bob_smith"]), ("example.com", ["bob_smith", "carol", "alice"]),
                ("b_s", ["bob_smith"]), ("%", [String]()), ("_", ["bob_smith"]),
            ] {
                let path = API.Admin.users.url(
                    relativeTo: URL(string: "http://x/")!, query: [URLQueryItem(name: "q", value: query)])
                try await app.testing().test(
                    .GET, String(path.absoluteString.dropFirst("http://x/".count)),
                    headers: .bearer(admin.accessToken.token)
                ) { response in
                    #expect(response.status == .ok, "\(query): \(response.body.string)")
                    let users = try response.decode(AdminUsersResponse.self).users
                    #expect(users.map(\.username) == names, "\(query)")
                }
            }
            let since = ISO8601DateFormatter().string(from: clock.now.addingTimeInterval(-60))
            try await app.testing().test(
                .GET, "api/v1/admin/audit?type=user.registered&from=\(since)", headers: .bearer(admin.accessToken.token)
            ) { response in
                let events = try response.decode(AuditEventsResponse.self).events
                #expect(events.count == 2, "carol's and alice's registrations, not bob's an hour before")
            }
        }
    }
}

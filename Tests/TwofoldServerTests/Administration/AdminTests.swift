import Fluent
import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldSQLite
import VaporTesting

@testable import TwofoldServer

@Suite(.tags(.database)) struct AdminTests {
    @Test func nonAdminsAreForbidden() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let bob = try await Accounts.signUp(app, "bob")
            let client = app.client()
            let calls: [(String, (String?) async throws -> Void)] = [
                (API.Admin.users.path(), { _ = try await client.send(API.Admin.users, bearer: $0) }),
                (API.Admin.audit.path(), { _ = try await client.send(API.Admin.audit, bearer: $0) }),
                (
                    API.Admin.user.path("\(bob.user.id)"),
                    { _ = try await client.send(API.Admin.user, "\(bob.user.id)", bearer: $0) }
                ),
            ]
            for (path, call) in calls {
                #expect(try await refusal { try await call(bob.accessToken.token) }.status == 403, "\(path)")
                #expect(try await refusal { try await call(nil) }.status == 401, "\(path)")
            }
            // Nor does a fresh second factor make anyone an administrator.
            let (secret, _) = try await TOTPSteps.enable(app, tokens: bob, clock: clock)
            let fresh = try await TOTPSteps.laterSession(app, secret: secret, clock: clock, "bob", waits: false)
            for (path, call) in calls {
                let refused = try await refusal { try await call(fresh) }
                #expect(refused.status == 403 && refused.problem?.detail == "This needs an administrator.", "\(path)")
            }
        }
    }

    @Test func adminsListUsersSeeDetailsUnlockAndReadTheAuditTrail() async throws {
        try await withTestApp { app in
            let admin = try await Administrators.adminTokens(app)
            let bob = try await Accounts.signUp(app, "bob")
            #expect(try await app.twofold.users.lock(userID: bob.user.id, now: Date()))
            let client = app.client()
            let token = admin.accessToken.token

            let listed = try await client.send(API.Admin.users, bearer: token).users
            try #require(listed.map(\.username) == ["alice", "bob"])
            let locked = try await refusal {
                try await app.client(from: "10.0.0.5").send(
                    API.Auth.login, LoginRequest(username: "bob", password: Accounts.password))
            }
            #expect(locked.status == 403)
            try #require(locked.code == .accountLocked)
            let unlocked = try await client.send(API.Admin.unlock, "\(bob.user.id)", bearer: token)
            try #require(unlocked.status == "active")
            let detail = try await client.send(API.Admin.user, "\(bob.user.id)", bearer: token)
            #expect(detail.user.username == "bob")
            #expect(detail.sessions.count == 1)
            #expect(detail.audit.contains { $0.type == "admin.user_unlocked" && $0.actorId == admin.user.id })
            let events = try await client.send(
                API.Admin.audit, bearer: token, query: AuditQuery(type: "login.succeeded")
            ).events
            #expect(events.count == 3)  // alice twice (before and after becoming admin), bob once
            #expect(events.allSatisfy { $0.ipAddress == "10.0.0.1" })
            #expect(
                try await refusal { try await client.send(API.Admin.user, "\(UUID())", bearer: token) }.status == 404)
            #expect(
                try await refusal { try await client.send(API.Admin.users, bearer: token, query: PageQuery(limit: 0)) }
                    .status == 422)
            // A parameter that is not what the document says is refused, never read as its
            // default or as "no filter" (schemathesis found each of these accepted).
            func item(_ name: String, _ value: String) -> URLQueryItem { URLQueryItem(name: name, value: value) }
            let (users, audit) = (API.Admin.users.path(), API.Admin.audit.path())
            let refused: [(String, [URLQueryItem], String)] = [
                (users, [item("offset", "null")], "offset"),
                (users, [item("offset", "1"), item("offset", "2")], "offset"),
                (users, [item("offset", "1000001")], "offset"),
                (users, [item("limit", "201")], "limit"),
                (audit, [item("userId", "")], "userId"),
                (audit, [item("userId", "alice")], "userId"),
                (audit, [item("type", "")], "type"),
                (audit, [item("from", "")], "from"),
                (audit, [item("type", String(repeating: "t", count: 65))], "type"),
                (audit, [item("from", "yesterday")], "from"),
                (audit, [item("to", "2026-13-40")], "to"),
            ]
            for (endpoint, query, field) in refused {
                let path = endpoint + "?" + query.map { "\($0.name)=\($0.value ?? "")" }.joined(separator: "&")
                let answer = try await refusal {
                    if endpoint == audit {
                        _ = try await client.send(API.Admin.audit, bearer: token, query: query)
                    } else {
                        _ = try await client.send(API.Admin.users, bearer: token, query: query)
                    }
                }
                #expect(answer.status == 422, "\(path)")
                let errors = answer.problem?.errors
                #expect(errors?[field] != nil, "\(path): \(errors ?? [:])")
            }
            let page = try await client.send(
                API.Admin.users, bearer: token, query: PageQuery(limit: 200, offset: 1_000_000))
            #expect(page.users.isEmpty)
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
            let client = app.client()
            for (query, names) in [
                ("BOB", ["bob_smith"]), ("example.com", ["bob_smith", "carol", "alice"]),
                ("b_s", ["bob_smith"]), ("%", [String]()), ("_", ["bob_smith"]),
            ] {
                let users = try await client.send(
                    API.Admin.users, bearer: admin.accessToken.token, query: UserQuery(q: query)
                ).users
                #expect(users.map(\.username) == names, "\(query)")
            }
            let events = try await client.send(
                API.Admin.audit, bearer: admin.accessToken.token,
                query: AuditQuery(type: "user.registered", from: clock.now.addingTimeInterval(-60))
            ).events
            #expect(events.count == 2, "carol's and alice's registrations, not bob's an hour before")
        }
    }
}

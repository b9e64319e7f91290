import Foundation
import SQLKit
import Testing
import TwofoldAPI
import TwofoldServer
import VaporTesting

@Suite(.tags(.database)) struct RegistrationTests {
    static let invalid: [([String: String], String)] = [
        (["username": "al", "email": "a@example.com", "password": "a long enough pass"], "username"),
        (["username": "al ice", "email": "a@example.com", "password": "a long enough pass"], "username"),
        (["username": "alice", "email": "not-an-email", "password": "a long enough pass"], "email"),
        (["username": "alice", "email": "a@b", "password": "a long enough pass"], "email"),
        (["username": "alice", "email": "a@example.com", "password": "short"], "password"),
        (["username": "alice", "email": "a@example.com", "password": "password123"], "password"),
        (["username": "alice", "email": "a@example.com", "password": "alice"], "password"),
        (
            [
                "username": "alice", "email": "a@example.com", "password": "a long enough pass",
                "phoneNumber": "555-1234",
            ], "phoneNumber"
        ),
        (
            [
                "username": "alice", "email": "a@example.com", "password": "a long enough pass",
                "phoneNumber": "+0123456789",
            ], "phoneNumber"
        ),
    ]

    @Test("each invalid field is named and nothing is stored", arguments: invalid)
    func invalidFieldsAreRefused(input: ([String: String], String)) async throws {
        try await withTestApp { app in
            try await app.testing().test(.POST, API.Auth.register.path(), headers: jsonHeaders, body: json(input.0)) {
                response in
                #expect(response.status == .unprocessableEntity)
                let problem = try response.problem()
                #expect(problem.code == "validation_failed")
                #expect(problem.errors?[input.1] != nil, "\(problem.errors ?? [:])")
            }
            try #require(try await AuditQueries.count(table: "users", on: app) == 0)
        }
    }

    @Test func missingAndMistypedFieldsAre422() async throws {
        try await withTestApp { app in
            for body in [#"{"username":"alice"}"#, #"{"username":1,"email":"a@example.com","password":"xxxxxxxxxx"}"#] {
                try await app.testing().test(
                    .POST, API.Auth.register.path(), headers: jsonHeaders, body: ByteBuffer(string: body)
                ) { response in
                    #expect(response.status == .unprocessableEntity)
                }
            }
            try #require(try await AuditQueries.count(table: "users", on: app) == 0)
        }
    }

    @Test func duplicateUsernameOrEmailConflicts() async throws {
        try await withTestApp { app in
            _ = try await Accounts.signUp(app)
            for body in [
                ["username": "ALICE", "email": "other@example.com", "password": Accounts.password],
                ["username": "alice2", "email": "Alice@Example.com", "password": Accounts.password],
            ] {
                try await app.testing().test(.POST, API.Auth.register.path(), headers: jsonHeaders, body: json(body)) {
                    response in
                    #expect(response.status == .conflict)
                    try #require(try response.problem().code == "conflict")
                }
            }
            try #require(try await AuditQueries.count(table: "users", on: app) == 1)
        }
    }

    @Test func registrationCanBeSwitchedOff() async throws {
        try await withTestApp(adjust: { $0.registrationEnabled = false }) { app in
            try await app.testing().test(
                .POST, API.Auth.register.path(), headers: jsonHeaders,
                body: json(["username": "alice", "email": "a@example.com", "password": Accounts.password])
            ) { response in
                #expect(response.status == .forbidden)
            }
            // Closed whatever is sent: an empty or broken body is not read first.
            for body in ["{}", "not json"] {
                try await app.testing().test(
                    .POST, API.Auth.register.path(), headers: jsonHeaders, body: ByteBuffer(string: body)
                ) { response in
                    #expect(response.status == .forbidden, "\(body)")
                }
            }
        }
    }

    @Test func passwordsAreStoredAsBcryptHashesOnly() async throws {
        try await withTestApp { app in
            _ = try await Accounts.signUp(app)
            let sql = try #require(app.db as? any SQLDatabase)
            let row = try #require(try await sql.raw("SELECT password_hash FROM users").first())
            let hash = try row.decode(column: "password_hash", as: String.self)
            #expect(hash.hasPrefix("$2b$04$") || hash.hasPrefix("$2a$04$") || hash.hasPrefix("$2y$04$"))
            #expect(!hash.contains(Accounts.password))
        }
    }
}

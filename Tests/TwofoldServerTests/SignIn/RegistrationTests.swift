import Foundation
import SQLKit
import Testing
import TwofoldAPI
import TwofoldClient
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
            let body = RegisterRequest(
                username: try #require(input.0["username"]), email: try #require(input.0["email"]),
                password: try #require(input.0["password"]), phoneNumber: input.0["phoneNumber"])
            let refused = try await refusal { try await app.client().send(API.Auth.register, body) }
            #expect(refused.status == 422)
            #expect(refused.code == .validationFailed)
            #expect(refused.problem?.errors?[input.1] != nil, "\(refused.problem?.errors ?? [:])")
            try #require(try await AuditQueries.count(table: "users", on: app) == 0)
        }
    }

    @Test func missingAndMistypedFieldsAre422() async throws {
        try await withTestApp { app in
            for body in [#"{"username":"alice"}"#, #"{"username":1,"email":"a@example.com","password":"xxxxxxxxxx"}"#] {
                try await app.raw(
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
                RegisterRequest(username: "ALICE", email: "other@example.com", password: Accounts.password),
                RegisterRequest(username: "alice2", email: "Alice@Example.com", password: Accounts.password),
            ] {
                let refused = try await refusal { try await app.client().send(API.Auth.register, body) }
                #expect(refused.status == 409)
                try #require(refused.code == .conflict)
            }
            try #require(try await AuditQueries.count(table: "users", on: app) == 1)
        }
    }

    @Test func registrationCanBeSwitchedOff() async throws {
        try await withTestApp(adjust: { $0.registrationEnabled = false }) { app in
            let refused = try await refusal {
                try await app.client().send(
                    API.Auth.register,
                    RegisterRequest(username: "alice", email: "a@example.com", password: Accounts.password))
            }
            #expect(refused.status == 403)
            // Closed whatever is sent: an empty or broken body is not read first.
            for body in ["{}", "not json"] {
                try await app.raw(
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

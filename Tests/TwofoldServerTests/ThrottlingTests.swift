import Foundation
import Testing
import TwofoldAPI
import TwofoldServer
import VaporTesting

@Suite struct ThrottlingTests {
    @Test func fiftyParallelWrongPasswordsAreThrottledAndTheRealUserIsNotLockedOut() async throws {
        try await withTestApp { app in
            _ = try await AuthFlowTests.signUp(app, address: "192.0.2.1")
            let attacker = "203.0.113.66"
            let results = try await withThrowingTaskGroup(of: (UInt, String?).self) { group in
                for index in 0..<50 {
                    group.addTask {
                        var result: (UInt, String?) = (0, nil)
                        try await app.testing().test(
                            .POST, API.Auth.login.path(), headers: .client(attacker),
                            body: json(["email": "alice@example.com", "password": "guess number \(index)"])
                        ) { response in
                            result = (response.status.code, response.headers.first(name: .retryAfter))
                        }
                        return result
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let evaluated = results.filter { $0.0 == 401 }.count
            let throttled = results.filter { $0.0 == 429 }
            #expect(evaluated <= 5, "at most the per-account-and-address burst is checked")
            #expect(evaluated + throttled.count == 50)
            #expect(throttled.allSatisfy { Int($0.1 ?? "") ?? 0 > 0 }, "every 429 says when to retry")
            try #require(try await AuditQueries.count(type: "login.failed", on: app) == evaluated)

            // The attacker's address stays throttled, even with the right password.
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client(attacker),
                body: json(["email": "alice@example.com", "password": AuthFlowTests.password])
            ) { response in
                #expect(response.status == .tooManyRequests)
                try #require(try response.problem().code == "rate_limited")
            }
            // Alice, from her own address, signs in at once.
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("192.0.2.1"),
                body: json(["email": "alice@example.com", "password": AuthFlowTests.password])
            ) { response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test func theLimitRefillsWithTime() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            _ = try await AuthFlowTests.signUp(app)
            for _ in 0..<5 {
                try await app.testing().test(
                    .POST, API.Auth.login.path(), headers: .client("198.51.100.7"),
                    body: json(["email": "alice@example.com", "password": "wrong password"])
                ) { response in #expect(response.status == .unauthorized) }
            }
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("198.51.100.7"),
                body: json(["email": "alice@example.com", "password": AuthFlowTests.password])
            ) { response in
                #expect(response.status == .tooManyRequests)
                #expect(response.headers.first(name: .retryAfter) == "60")
            }
            clock.advance(by: 60)
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("198.51.100.7"),
                body: json(["email": "alice@example.com", "password": AuthFlowTests.password])
            ) { response in #expect(response.status == .ok) }
        }
    }
}

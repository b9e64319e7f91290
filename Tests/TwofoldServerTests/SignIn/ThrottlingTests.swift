import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldServer
import VaporTesting

@Suite(.tags(.database)) struct ThrottlingTests {
    @Test func fiftyParallelWrongPasswordsAreThrottledAndTheRealUserIsNotLockedOut() async throws {
        try await withTestApp { app in
            _ = try await Accounts.signUp(app, address: "192.0.2.1")
            let attacker = app.client(from: "203.0.113.66")
            let results = try await withThrowingTaskGroup(of: (Int, Int?).self) { group in
                for index in 0..<50 {
                    group.addTask {
                        do {
                            _ = try await attacker.send(
                                API.Auth.login,
                                LoginRequest(email: "alice@example.com", password: "guess number \(index)"))
                            return (200, nil)
                        } catch let refused as APIError {
                            return (refused.status, refused.retryAfterHeader)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let evaluated = results.filter { $0.0 == 401 }.count
            let throttled = results.filter { $0.0 == 429 }
            #expect(evaluated <= 5, "at most the per-account-and-address burst is checked")
            // The statuses themselves in the expression, so a failure's one line shows them.
            #expect(results.map(\.0).filter { ![401, 429].contains($0) } == [], "\(results.map(\.0).sorted())")
            #expect(throttled.allSatisfy { ($0.1 ?? 0) > 0 }, "every 429 says when to retry")
            try #require(try await AuditQueries.count(type: "login.failed", on: app) == evaluated)

            // The attacker's address stays throttled, even with the right password.
            let right = LoginRequest(email: "alice@example.com", password: Accounts.password)
            let refused = try await refusal { try await attacker.send(API.Auth.login, right) }
            #expect(refused.status == 429)
            try #require(refused.code == .rateLimited)
            // Alice, from her own address, signs in at once.
            _ = try await app.client(from: "192.0.2.1").send(API.Auth.login, right)
        }
    }

    @Test func theLimitRefillsWithTime() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            _ = try await Accounts.signUp(app)
            let client = app.client(from: "198.51.100.7")
            let wrong = LoginRequest(email: "alice@example.com", password: "wrong password")
            let right = LoginRequest(email: "alice@example.com", password: Accounts.password)
            for _ in 0..<5 {
                #expect(try await refusal { try await client.send(API.Auth.login, wrong) }.status == 401)
            }
            let throttled = try await refusal { try await client.send(API.Auth.login, right) }
            #expect(throttled.status == 429)
            #expect(throttled.retryAfterHeader == 60)
            clock.advance(by: 60)
            _ = try await client.send(API.Auth.login, right)
        }
    }

    static func login(_ app: Application, from address: String, password: String, device: String? = nil)
        async throws -> Int
    {
        try await status {
            try await app.client(from: address).send(
                API.Auth.login, LoginRequest(username: "alice", password: password),
                headers: device.map { [Wire.Header.trustedDevice: $0] } ?? [:])
        }
    }

    /// Issue T: strangers guessing from many addresses drain the account-wide bucket, but the
    /// owner's remembered device is exempt from it: they cannot hold the owner's sign-in shut.
    @Test func strangersFromManyAddressesCannotHoldARememberedDeviceOut() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let (device, _) = try await RememberedDeviceSteps.trust(app, secret: secret, clock: clock)
            var refused = 0
            for index in 0..<110 {
                let status = try await Self.login(
                    app, from: "198.51.\(index / 200).\(index % 200 + 1)", password: "guess \(index)")
                if status == 429 { refused += 1 }
            }
            #expect(refused >= 10, "the account-wide bucket holds the strangers back")
            #expect(try await Self.login(app, from: "192.0.2.200", password: Accounts.password) == 429)
            #expect(
                try await Self.login(app, from: "192.0.2.201", password: Accounts.password, device: device) == 200,
                "the owner's remembered device is exempt")
        }
    }

    /// Issue T: the account-wide bucket counts failures only: a right password gives its token back.
    @Test func rightPasswordsDoNotSpendTheAccountBucket() async throws {
        try await withTestApp { app in
            _ = try await Accounts.signUp(app)
            for index in 0..<130 {
                let status = try await Self.login(
                    app, from: "198.18.\(index / 200).\(index % 200 + 1)", password: Accounts.password)
                #expect(status == 200, "sign-in \(index)")
                if status != 200 { break }
            }
        }
    }

    /// Review of issue T, finding 5: the remembered device's exemption is not a free pass: the
    /// device token has a bucket of its own, as tight as one address's.
    @Test func aRememberedDeviceTokenHasABucketOfItsOwn() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let (device, _) = try await RememberedDeviceSteps.trust(app, secret: secret, clock: clock)
            var statuses: [Int] = []
            for index in 0..<8 {
                statuses.append(
                    try await Self.login(app, from: "198.19.0.\(index + 1)", password: "guess \(index)", device: device)
                )
            }
            #expect(
                statuses.prefix(5).allSatisfy { $0 == 401 } && statuses.suffix(3).allSatisfy { $0 == 429 },
                "\(statuses)")
        }
    }
}

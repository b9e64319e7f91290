import Foundation
import Testing
import TwofoldAPI
import VaporTesting

@testable import TwofoldServer

/// An administrator's unlock is under the sign-in policy as a reset is (issue V finding 6): a
/// stale administrator session clears no wrong-code lock, and unlocking lifts no recovery's hold.
@Suite struct AdministratorPolicyTests {
    static func unlock(_ app: Application, _ userID: UUID, token: String) async throws -> (UInt, String?) {
        var result: (UInt, String?) = (0, nil)
        try await app.testing().test(.POST, API.Admin.unlock.path("\(userID)"), headers: .bearer(token)) {
            result = ($0.status.code, try? $0.problem().code)
        }
        return result
    }

    /// The finding: an administrator session refused a reset (403) still cleared a user's
    /// wrong-code locks, unlimited guessing for whoever has that user's password.
    @Test func aStaleAdministratorSessionClearsNoLock() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let admin = try await AdminTests.adminTokens(app)
            clock.advance(by: 6 * 60)  // the administrator's password is no longer recent
            let bob = try await AuthFlowTests.signUp(app, "bob")
            let (secret, _) = try await TOTPSteps.enable(app, tokens: bob, clock: clock)
            let flow = try await TOTPSteps.startLogin(app, "bob")
            for _ in 0..<5 { _ = try await TOTPSteps.validate(app, flow: flow, code: "000000") }
            clock.advance(by: 60)
            #expect(try await TOTPSteps.validate(app, flow: flow, code: try TOTPSteps.code(secret, clock)).0 == 429)
            let refused = try await Self.unlock(app, bob.user.id, token: admin.accessToken.token)
            #expect(refused.0 == 403 && refused.1 == "step_up_required", "\(refused)")
            #expect(
                try await TOTPSteps.validate(app, flow: flow, code: try TOTPSteps.code(secret, clock, offset: 30)).0
                    == 429, "still locked")
            let stepped = try await AuthFlowTests.stepUpWithPassword(app, token: admin.accessToken.token)
            #expect(try await Self.unlock(app, bob.user.id, token: stepped).0 == 200)
            clock.advance(by: 30)
            #expect(try await TOTPSteps.validate(app, flow: flow, code: try TOTPSteps.code(secret, clock)).0 == 200)
        }
    }

    /// Unlocking a recovered account does not let the password alone in before the recovered
    /// session has set up a factor: only a reset lifts the hold.
    @Test func unlockingLiftsNoRecoveryHold() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let (bob, _, _) = try await RecoveryTests.recovered(app, clock: clock)
            let admin = try await AuthFlowTests.stepUpWithPassword(
                app, token: try await AdminTests.signIn(app, "alice").accessToken.token)
            #expect(try await Self.unlock(app, bob.user.id, token: admin).0 == 200)
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("10.0.0.9"),
                body: json(["username": "bob", "password": AuthFlowTests.password])
            ) { response in
                #expect(response.status == .forbidden)
                #expect((try? response.problem())?.code == "factor_setup_required")
            }
        }
    }
}

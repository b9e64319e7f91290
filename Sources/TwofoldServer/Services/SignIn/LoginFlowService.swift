import Foundation
import TwofoldAPI

/// Login flows: the state between a first factor and the second (`otpFlowId` / `tempToken`).
/// A flow lives 5 minutes in the database (seed 003; `ProductRules.loginFlowLifetime`), belongs
/// to one user, and is consumed exactly once, by a single conditional update, when a second step
/// succeeds.
struct LoginFlowService: Sendable {
    let store: any LoginFlowStore
    let users: any UserStore
    let clock: ServerClock
    let lifetime: TimeInterval

    /// Starts a flow for `user` (as read before the password was checked: the flow keeps its
    /// `SessionEpoch`), who has proven `firstFactor`; returns the token the client holds.
    func start(user: User, firstFactor: String, origin: RequestOrigin) async throws -> (
        token: String, flow: LoginFlowRecord
    ) {
        guard !SessionEpoch.isResetting(user.sessionEpoch) else { throw SessionService.resetUnderWay }
        let now = clock.now()
        let token = SecureToken.generate()
        let flow = LoginFlowRecord(
            id: SecureRandom.timeOrderedUUID(at: now), tokenHash: SecureToken.hash(token), userID: user.id,
            firstFactor: firstFactor, createdAt: now, expiresAt: now.addingTimeInterval(lifetime),
            ipAddress: origin.address, sessionEpoch: user.sessionEpoch)
        try await store.insert(flow)
        return (token, flow)
    }

    /// The flow token a request names: `otpFlowId`, or `tempToken` in its place (the seeds use
    /// both names); `422` when it names neither.
    static func token(otpFlowId: String?, tempToken: String?) throws -> String {
        guard let token = otpFlowId ?? tempToken else {
            throw InputValidation.failure(["otpFlowId": "is required, or tempToken in its place"])
        }
        return token
    }

    /// The live flow named by `token`, without consuming it (a second step checks its code
    /// first). Refuses unknown, expired and consumed flows, and flows of another user when
    /// `userID` is given.
    func active(_ token: String, userID: UUID? = nil) async throws -> LoginFlowRecord {
        guard !token.isEmpty, token.count <= 128, let flow = try await store.flow(tokenHash: SecureToken.hash(token))
        else { throw Self.unknownFlow }
        if let userID, flow.userID != userID { throw Self.unknownFlow }
        try refuseIfUnusable(consumedAt: flow.consumedAt, expiresAt: flow.expiresAt)
        return flow
    }

    /// The flow named by `token`, used or expired too (what became of a sign-in, asked after
    /// its end); unknown tokens are refused.
    func known(_ token: String) async throws -> LoginFlowRecord {
        guard !token.isEmpty, token.count <= 128, let flow = try await store.flow(tokenHash: SecureToken.hash(token))
        else { throw Self.unknownFlow }
        return flow
    }

    private func refuseIfUnusable(consumedAt: Date?, expiresAt: Date) throws {
        if consumedAt != nil { throw Self.alreadyUsed }
        if expiresAt <= clock.now() { throw expired }
    }

    /// The live flow named by `token` with its user and the user's active authenticator-app
    /// secret, read with one statement where the request runs: every second step reads this
    /// before its unit of work, and the most common one needs nothing more. Refuses as
    /// `active(_:)` does, and a flow whose user is gone.
    func pending(_ token: String) async throws -> PendingSecondStep {
        guard !token.isEmpty, token.count <= 128,
            let pending = try await store.pending(tokenHash: SecureToken.hash(token))
        else { throw Self.unknownFlow }
        try refuseIfUnusable(consumedAt: pending.consumedAt, expiresAt: pending.expiresAt)
        // A locked account is told so (by the second step), not that its flow was overtaken.
        if pending.overtaken, pending.userStatus == .active { throw Self.overtaken }
        return pending
    }

    /// Consumes the flow: succeeds for exactly one caller, however many race, and only while
    /// its user is active (the flow and user may have been read before a lock). Returns the
    /// time it was consumed at, which names this claim.
    @discardableResult
    func consume(_ flow: PendingSecondStep) async throws -> Date {
        let now = clock.now()
        guard try await store.consume(flowID: flow.flowID, now: now) else {
            try await explainUnavailable(flow, now: now)
        }
        return now
    }

    /// Why `flow` could not be consumed at `now`: expired, its user locked, overtaken by an end
    /// of every session, or used.
    func explainUnavailable(_ flow: PendingSecondStep, now: Date) async throws -> Never {
        if flow.expiresAt <= now { throw expired }
        guard let user = try await users.user(id: flow.user.id), user.status == .active else {
            throw Problem.accountLocked
        }
        if user.sessionEpoch > flow.sessionEpoch { throw Self.overtaken }
        throw Self.alreadyUsed
    }

    /// Claims the flow, runs `check` (its factor) with the claim's time, and gives the flow back
    /// when `check` throws, so the user can try again on it (issue S item 11: the flow is claimed
    /// before its factor is checked, so parallel submissions on one flow check, and use up, at
    /// most one factor). Only this claim is given back.
    func claimed<T>(_ flow: PendingSecondStep, _ check: (Date) async throws -> T) async throws -> T {
        let claimedAt = try await consume(flow)
        do {
            return try await check(claimedAt)
        } catch {
            try await store.release(flowID: flow.flowID, claimedAt: claimedAt)
            throw error
        }
    }

    /// Ends the flow `flowID` for good, so nothing completes it ("This wasn't me" on the phone),
    /// not even a second step that had claimed it at that moment and gives it back.
    func end(flowID: UUID) async throws {
        try await store.end(flowID: flowID, now: clock.now())
    }

    static let unknownFlow = Problem(
        status: 401, code: .unauthorized, title: "Unknown login flow",
        detail: "This sign-in is not known; start again with your password.")
    /// The flow outlived `lifetime` (the configured `TWOFOLD_LOGIN_FLOW_SECONDS`).
    var expired: Problem {
        Problem(
            status: 401, code: .expired, title: "Login flow expired",
            detail: "More than \(lifetime.inWords) passed since the password; start again.",
            errors: Self.flowField)
    }
    /// Every session of the account was ended after the flow's password (`SessionEpoch`).
    static let overtaken = Problem(
        status: 401, code: .expired, title: "Sign-in overtaken",
        detail: "Every session of this account was ended while you were signing in. Start again with your password.",
        errors: flowField)
    static let alreadyUsed = Problem(
        status: 409, code: .alreadyUsed, title: "Login flow already used",
        detail: "This sign-in was already completed; start again.", errors: flowField)
    /// Names the flow as what is expired or used, so a client tells the flow's end from a code's
    /// (a backup code used a moment ago is `already_used` too, and the flow goes on).
    static let flowField = ["otpFlowId": "This sign-in is over."]
}

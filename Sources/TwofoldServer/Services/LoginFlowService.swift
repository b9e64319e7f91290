import Fluent
import Foundation
import SQLKit
import TwofoldAPI
import Vapor

/// Login flows: the state between a first factor and the second (`otpFlowId` / `tempToken`).
/// A flow lives 5 minutes in the database (seed 003; `ProductRules.loginFlowLifetime`), belongs
/// to one user, and is consumed exactly once, by a single conditional update, when a second step
/// succeeds.
enum LoginFlowService {

    /// Starts a flow for `user`, who has proven `firstFactor`; returns the token the client holds.
    static func start(user: User, firstFactor: String, request: Request) async throws -> (
        token: String, flow: LoginFlow
    ) {
        let now = request.twofold.clock.now()
        let token = SecureToken.generate()
        let flow = LoginFlow(
            tokenHash: SecureToken.hash(token), userID: try user.requireID(), firstFactor: firstFactor, now: now,
            expiresAt: now.addingTimeInterval(request.twofold.rules.loginFlowLifetime),
            ipAddress: request.clientAddress)
        try await flow.create(on: request.db)
        return (token, flow)
    }

    /// The live flow named by `token`, without consuming it (a second step checks its code
    /// first). Refuses unknown, expired and consumed flows, and flows of another user when
    /// `userID` is given.
    /// Read with one SQL statement: every second step starts here, and a Fluent query costs
    /// several times as much (it reflects over the model's properties).
    static func active(_ token: String, userID: UUID? = nil, request: Request) async throws -> LoginFlow {
        let hash = SecureToken.hash(token)
        guard
            let flow = try await request.rows(
                Statement("SELECT \(LoginFlow.columns) FROM login_flows WHERE token_hash = ?", .text(hash)),
                { try LoginFlow(row: $0, tokenHash: hash) }
            ).first
        else { throw unknownFlow }
        if let userID, flow.userID != userID { throw unknownFlow }
        try refuseIfUnusable(consumedAt: flow.consumedAt, expiresAt: flow.expiresAt, request: request)
        return flow
    }

    private static func refuseIfUnusable(consumedAt: Date?, expiresAt: Date, request: Request) throws {
        if consumedAt != nil { throw alreadyUsed }
        if expiresAt <= request.twofold.clock.now() { throw expired }
    }

    /// The live flow named by `token` with its user and the user's active authenticator-app
    /// secret, read with one statement on the request's own thread (`Request.read`): every
    /// second step reads this before its unit of work, and the most common one needs nothing
    /// more. Refuses as `active(_:)` does, and a flow whose user is gone.
    static func pending(_ token: String, request: Request) async throws -> PendingSecondStep {
        let hash = SecureToken.hash(token)
        guard
            let pending = try await request.read(PendingSecondStep.query(tokenHash: hash), PendingSecondStep.init)
                .first
        else { throw unknownFlow }
        try refuseIfUnusable(consumedAt: pending.consumedAt, expiresAt: pending.expiresAt, request: request)
        return pending
    }

    /// Consumes the flow: succeeds for exactly one caller, however many race, and only while
    /// its user is active (the flow and user may have been read before a lock).
    /// Returns the time it was consumed at, which names this claim.
    @discardableResult
    static func consume(_ flow: PendingSecondStep, request: Request) async throws -> Date {
        let now = request.twofold.clock.now()
        let consumed = try await request.changes(
            Statement(
                """
                UPDATE login_flows SET consumed_at = ?
                WHERE id = ? AND consumed_at IS NULL AND expires_at > ?
                  AND EXISTS (SELECT 1 FROM users WHERE users.id = login_flows.user_id AND users.status = 'active')
                """, .date(now), .uuid(flow.flowID), .date(now)))
        guard consumed > 0 else {
            if flow.expiresAt <= now { throw expired }
            let inactive = try await request.count(
                Statement("SELECT id FROM users WHERE id = ? AND status <> 'active'", .uuid(flow.user.id)))
            if inactive > 0 { throw Problem.accountLocked }
            throw alreadyUsed
        }
        return now
    }

    /// Gives back a flow claimed by `consume` whose factor then proved wrong, so the user can
    /// try again on it (issue S item 11: the flow is claimed before its factor is checked, so
    /// parallel submissions on one flow check, and use up, at most one factor).
    /// `claimedAt` is what `consume` returned: only that claim is given back.
    static func release(_ flow: PendingSecondStep, claimedAt: Date, request: Request) async throws {
        try await request.run(
            Statement(
                "UPDATE login_flows SET consumed_at = NULL WHERE id = ? AND consumed_at = ?", .uuid(flow.flowID),
                .date(claimedAt)))
    }

    /// Claims the flow, runs `check` (its factor) with the claim's time, and gives the flow
    /// back when `check` throws.
    static func claimed<T>(_ flow: PendingSecondStep, request: Request, _ check: (Date) async throws -> T)
        async throws -> T
    {
        let claimedAt = try await consume(flow, request: request)
        do {
            return try await check(claimedAt)
        } catch {
            try await release(flow, claimedAt: claimedAt, request: request)
            throw error
        }
    }

    static let unknownFlow = Problem(
        status: 401, code: .unauthorized, title: "Unknown login flow",
        detail: "This sign-in is not known; start again with your password.")
    static let expired = Problem(
        status: 401, code: .expired, title: "Login flow expired",
        detail: "More than 5 minutes passed since the password; start again.")
    static let alreadyUsed = Problem(
        status: 409, code: .alreadyUsed, title: "Login flow already used",
        detail: "This sign-in was already completed; start again.")
}

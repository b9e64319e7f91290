import Foundation
import TwofoldAPI

/// Starts sessions and rotates their refresh tokens.
///
/// Every refresh token is used once. Exchanging one is a single conditional update
/// (`SessionStore.useRefreshToken`), so of any number of parallel exchanges exactly one wins.
/// Presenting a token that was already exchanged means it was copied: the whole session (the
/// token family) is revoked and the reuse audited (OAuth 2.0 Security BCP §4.14).
///
/// Built with what it uses and given values, never a request.
struct SessionService: Sendable {
    let store: any SessionStore
    let signer: TokenService
    let audit: Auditor
    let clock: ServerClock
    let refreshTokenLifetime: TimeInterval
    /// Every sign-in's device token (`AuthTokensResponse.deviceToken`).
    let deviceCookies: DeviceCookies

    /// A session written to the database whose access token is not signed yet: the second step
    /// writes it next to the database and signs elsewhere, so the database's thread does not.
    struct Recorded: Sendable {
        let userID: UUID
        let sessionID: UUID
        let methods: [String]
        let now: Date
        let refreshToken: TokenDTO
        let user: UserDTO
        /// The account's `SessionEpoch` the sign-in read: its device token names it.
        var epoch = 0
    }

    /// A refresh token about to be written: the token (shown once) and its record, made
    /// beforehand (randomness and hashing) so that writing it is one statement.
    struct NewRefreshToken: Sendable {
        let token: TokenDTO
        let record: RefreshTokenRecord
    }

    /// A session about to be written, with its key and first refresh token already made, so
    /// that writing it is two statements and nothing else: the second step makes it before its
    /// unit of work.
    struct NewSession: Sendable {
        let recorded: Recorded
        let record: SessionRecord
        let refreshToken: NewRefreshToken
    }

    func newRefreshToken(for sessionID: UUID, now: Date) -> NewRefreshToken {
        let token = SecureToken.generate()
        let expiresAt = now.addingTimeInterval(refreshTokenLifetime)
        return NewRefreshToken(
            token: TokenDTO(token: token, expiresAt: expiresAt),
            record: RefreshTokenRecord(
                id: SecureRandom.timeOrderedUUID(at: now), sessionID: sessionID, tokenHash: SecureToken.hash(token),
                createdAt: now, expiresAt: expiresAt))
    }

    /// Makes (but does not write) a session for `user`, who has just proven `methods` (RFC 8176
    /// values, for the token) by `proofs` (bound to their credentials, for the sign-in policy), in a
    /// sign-in that read the account's `SessionEpoch` `epoch` before it checked anything.
    /// Refused while the account's factors are being reset (an odd epoch).
    func newSession(user: UserDTO, epoch: Int, methods: [String], proofs: [Proof], origin: RequestOrigin) throws
        -> NewSession
    {
        guard !SessionEpoch.isResetting(epoch) else { throw Self.resetUnderWay }
        let now = clock.now()
        let sessionID = SecureRandom.timeOrderedUUID(at: now)
        let refresh = newRefreshToken(for: sessionID, now: now)
        return NewSession(
            recorded: Recorded(
                userID: user.id, sessionID: sessionID, methods: methods, now: now, refreshToken: refresh.token,
                user: user, epoch: epoch),
            record: SessionRecord(
                id: sessionID, userID: user.id, authTime: now, methods: methods, createdAt: now, lastUsedAt: now,
                ipAddress: origin.address, userAgent: origin.userAgent,
                proofs: Dictionary(proofs.map { ($0, now) }, uniquingKeysWith: { first, _ in first }), epoch: epoch),
            refreshToken: refresh)
    }

    /// Writes a session made beforehand and its first refresh token.
    func record(_ session: NewSession) async throws -> Recorded {
        try await store.insert(session.record, firstRefreshToken: session.refreshToken.record)
        return session.recorded
    }

    /// Creates a session for a user who has just proven `methods` by `proofs`, with its first
    /// token pair. `user` is the account as read before the proof was checked: its
    /// `SessionEpoch` is the session's.
    func start(user: User, methods: [String], proofs: [Proof], origin: RequestOrigin) async throws
        -> AuthTokensResponse
    {
        try tokens(
            for: try await record(
                try newSession(
                    user: user.dto, epoch: user.sessionEpoch, methods: methods, proofs: proofs, origin: origin)))
    }

    /// Signs the access token of a recorded session.
    func tokens(for session: Recorded) throws -> AuthTokensResponse {
        let access = try signer.issue(
            userID: session.userID, sessionID: session.sessionID, methods: session.methods, authTime: session.now,
            now: session.now)
        return AuthTokensResponse(
            accessToken: access, refreshToken: session.refreshToken, user: session.user,
            deviceToken: deviceCookies.issue(userID: session.userID, epoch: session.epoch, now: session.now))
    }

    /// Exchanges a refresh token for a new pair.
    func refresh(_ token: String, origin: RequestOrigin) async throws -> RefreshResponse {
        let now = clock.now()
        let hash = SecureToken.hash(token)
        guard let sessionID = try await store.useRefreshToken(hash: hash, now: now) else {
            try await explainRefusal(hash: hash, now: now, origin: origin)
        }
        guard let session = try await store.session(id: sessionID) else { throw Self.invalidRefreshToken }
        try await store.touch(sessionID: sessionID, now: now)
        let refresh = newRefreshToken(for: sessionID, now: now)
        try await store.insert(refresh.record)
        let access = try signer.issue(
            userID: session.userID, sessionID: sessionID, methods: session.methods, authTime: session.authTime,
            now: now)
        return RefreshResponse(accessToken: access, refreshToken: refresh.token)
    }

    /// Why a refresh token could not be used; revokes the family when it had been used before.
    private func explainRefusal(hash: String, now: Date, origin: RequestOrigin) async throws -> Never {
        guard let stored = try await store.refreshToken(hash: hash) else { throw Self.invalidRefreshToken }
        if stored.usedAt != nil {
            if try await store.revoke(sessionID: stored.sessionID, reason: "refresh_token_reused", now: now) {
                try await audit.record(
                    .refreshTokenReused, user: try await store.session(id: stored.sessionID)?.userID,
                    detail: "an already rotated refresh token was presented; session \(stored.sessionID) revoked",
                    origin: origin)
            }
            throw Self.invalidRefreshToken
        }
        if stored.expiresAt <= now {
            throw Problem(status: 401, code: .expired, title: "Refresh token expired", detail: "Sign in again.")
        }
        throw Self.invalidRefreshToken  // its session was revoked
    }

    static let invalidRefreshToken = Problem(
        status: 401, code: .unauthorized, title: "Invalid refresh token",
        detail: "The refresh token is not valid; sign in again.")

    /// Ends the session `refreshToken` belongs to. Logging out twice is not an error.
    func logout(refreshToken: String, origin: RequestOrigin) async throws {
        guard let stored = try await store.refreshToken(hash: SecureToken.hash(refreshToken)) else {
            throw Self.invalidRefreshToken
        }
        if try await store.revoke(sessionID: stored.sessionID, reason: "logout", now: clock.now()) {
            try await audit.record(
                .sessionRevoked, user: try await store.session(id: stored.sessionID)?.userID, detail: "logout",
                origin: origin)
        }
    }

    /// The user's live sessions, most recently used first; `current` is marked.
    func list(userID: UUID, current: UUID?) async throws -> [SessionDTO] {
        try await store.liveSessions(userID: userID).map {
            SessionDTO(
                id: $0.id, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt, authTime: $0.authTime,
                methods: $0.methods, userAgent: $0.userAgent, ipAddress: $0.ipAddress, current: $0.id == current)
        }
    }

    /// The session `sessionID` when it is a live session of `userID` (every bearer check asks;
    /// its proofs are what the sign-in policy reads).
    func live(sessionID: UUID, userID: UUID) async throws -> SessionRecord? {
        guard let session = try await store.session(id: sessionID), session.userID == userID, session.isLive
        else { return nil }
        return session
    }

    /// Revokes one session of `userID`: `404` when it has none by that id; audited when this
    /// call ended it.
    func revoke(sessionID: UUID, ofUser userID: UUID, reason: String, origin: RequestOrigin) async throws {
        guard let session = try await store.session(id: sessionID), session.userID == userID else {
            throw Problem(status: 404, code: .notFound, title: "No such session")
        }
        if try await store.revoke(sessionID: sessionID, reason: reason, now: clock.now()) {
            try await audit.record(.sessionRevoked, user: userID, detail: "session \(sessionID)", origin: origin)
        }
    }

    /// Revokes every live session of `userID` but `kept` that `ends` picks (one that proved or
    /// added a factor since removed); how many this call ended.
    func endSessions(of userID: UUID, except kept: UUID?, where ends: (SessionProof) -> Bool) async throws -> Int {
        var ended = 0
        for session in try await store.liveSessions(userID: userID)
        where session.id != kept && ends(SessionProof(session)) {
            if try await store.revoke(sessionID: session.id, reason: "factor removed", now: clock.now()) { ended += 1 }
        }
        return ended
    }

    /// Revokes every live session of a user but `kept`, after moving the account's
    /// `SessionEpoch` past them; how many. Statements only, so it may run inside a unit of work
    /// (a lock set by a wrong code).
    @discardableResult
    func revokeAll(userID: UUID, except kept: UUID? = nil, reason: String) async throws -> Int {
        try await store.revokeAll(userID: userID, except: kept, reason: reason, now: clock.now())
    }

    /// Runs `removal` (of factors) as a reset of the account (`SessionEpoch`): no sign-in starts
    /// and no session but `kept` is live from before it until after it, so none can prove a
    /// factor the removal has not reached and add another behind it. Waits (up to 10 seconds) for
    /// another reset of the account to finish first. Closed also when `removal` throws.
    func reset<T>(userID: UUID, keeping kept: UUID? = nil, _ removal: () async throws -> T) async throws -> T {
        var waited: Duration = .zero
        let claim = SecureToken.generate()
        while try await !store.openReset(
            userID: userID, kept: kept, claim: claim, now: clock.now(),
            until: clock.now().addingTimeInterval(Self.resetClaim))
        {
            guard waited < .seconds(10) else { throw Self.resetUnderWay }
            try await Task.sleep(for: .milliseconds(50))
            waited += .milliseconds(50)
        }
        do {
            let result = try await removal()
            try await store.closeReset(userID: userID, kept: kept, claim: claim)
            return result
        } catch {
            // A closing that fails too is left to `Housekeeping` once the claim runs out.
            try? await store.closeReset(userID: userID, kept: kept, claim: claim)
            throw error
        }
    }

    /// How long a reset's claim holds: one cut short (the server stopped) is taken over after it,
    /// or closed by `Housekeeping`.
    static let resetClaim: TimeInterval = 120

    static let resetUnderWay = Problem(
        status: 409, code: .conflict, title: "Account being changed",
        detail: "This account's sign-in methods are being changed. Try again in a moment.")

    /// Records a freshly proven factor on the caller's session: `auth_time` becomes now, the
    /// proof `proof` is dated now, and `amr` gains `method` (and `mfa` for a second factor; a
    /// password re-entered is `pwd` alone). `method` nil records the proof only (an email code on
    /// an account without email codes proves the address, not a factor). Returns a new access
    /// token carrying them.
    func stepUp(caller: AuthenticatedUser, amr method: String?, proof: Proof) async throws -> TokenDTO {
        guard let session = try await store.session(id: caller.sessionID), session.isLive else {
            throw BearerAuthentication.unauthorized("The session of this access token has ended.")
        }
        let now = clock.now()
        var methods = session.methods
        let added = method.map { $0 == "pwd" ? [$0] : [$0, "mfa"] } ?? []
        for value in added where !methods.contains(value) { methods.append(value) }
        var proofs = session.proofs
        proofs[proof] = now
        guard try await store.stepUp(sessionID: caller.sessionID, methods: methods, proofs: proofs, now: now) else {
            throw BearerAuthentication.unauthorized("The session of this access token has ended.")
        }
        return try signer.issue(
            userID: caller.userID, sessionID: caller.sessionID, methods: methods, authTime: now, now: now)
    }

    /// Records that the session `sessionID` added `factors` (`FactorChanges.factorName`), so
    /// that none of them steps it up.
    func recordAdded(_ factors: [String], sessionID: UUID) async throws {
        try await store.recordAdded(factors, sessionID: sessionID)
    }

    /// The caller's session as stored now: its proofs and what it added, read afresh (a check
    /// made after a factor was verified sees an addition recorded meanwhile).
    func proof(of caller: AuthenticatedUser) async throws -> SessionProof {
        guard let session = try await live(sessionID: caller.sessionID, userID: caller.userID) else {
            throw BearerAuthentication.unauthorized("The session of this access token has ended.")
        }
        return SessionProof(session)
    }
}

extension SessionService {
    /// The live session whose refresh token a browser's cookie holds: not used, not expired,
    /// not revoked.
    func browserSession(refreshToken: String) async throws -> SessionRecord? {
        guard let stored = try await store.refreshToken(hash: SecureToken.hash(refreshToken)), stored.usedAt == nil,
            stored.expiresAt > clock.now(), let session = try await store.session(id: stored.sessionID),
            session.isLive
        else { return nil }
        return session
    }
}

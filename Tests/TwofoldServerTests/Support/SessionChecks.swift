import Foundation
import Testing
import TwofoldAPI
import VaporTesting

@testable import TwofoldServer

/// Sessions: the live and revoked ones of a user, and a check that a session has ended.
enum SessionChecks {
    /// Two sessions of `user`'s, stored: one live, one revoked.
    static func sessions(_ app: Application, user: UUID) async throws -> (live: AddingSession, revoked: AddingSession) {
        let store = SQLSessionStore(database: app.twofold.database)
        let now = Date()
        var made: [UUID] = []
        for _ in 0..<2 {
            let session = SessionRecord(
                id: UUID(), userID: user, authTime: now, methods: ["pwd"], createdAt: now, lastUsedAt: now,
                ipAddress: "10.0.0.1", userAgent: nil, proofs: [.password: now])
            try await store.insert(
                session,
                firstRefreshToken: RefreshTokenRecord(
                    id: UUID(), sessionID: session.id, tokenHash: "hash-\(session.id)", createdAt: now,
                    expiresAt: now.addingTimeInterval(3600)))
            made.append(session.id)
        }
        #expect(try await store.revoke(sessionID: made[1], reason: "signed out everywhere", now: now))
        return (AddingSession(made[0]), AddingSession(made[1]))
    }

    /// `body` is refused as the write of a session that ended.
    static func expectEnded(_ what: String, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("a revoked session's write went ahead: \(what)")
        } catch let problem as Problem {
            #expect(problem.status == 401 && problem.code == .unauthorized, "\(what): \(problem)")
        } catch {
            Issue.record("\(what): \(error)")
        }
    }
}

import Crypto
import Fluent
import Foundation
import SQLKit
import TwofoldAPI
import TwofoldCore
import Vapor

/// SMS and email codes (seeds 002, 003): 6 digits, single use, stored as a keyed hash; by
/// default (`ProductRules`) they work 5 minutes, take at most 5 wrong tries each, and a new one is
/// sent at most every 60 seconds and 5 an hour per user. The code and its message are written
/// in one transaction; the delivery worker sends it.
enum OneTimeCodeService {

    /// Sends a fresh code to `destination`; earlier unused codes of the same kind stop working.
    /// Returns the answer for the client: when the next send is allowed, where it went (masked),
    /// when the code expires. Throws `429 rate_limited` inside the cooldown or over the hourly limit.
    @discardableResult
    static func send(
        _ channel: OutboxMessage.Channel, purpose: OneTimeCode.Purpose, to destination: String, userID: UUID,
        flowID: UUID?, request: Request
    ) async throws -> CodeSentResponse {
        let now = request.twofold.clock.now()
        let rules = request.twofold.rules
        let lifetime = rules.codeLifetime
        let cooldown = RateLimiter.Rule(capacity: 1, perSecond: 1 / rules.codeResendAfter)
        let hourly = RateLimiter.Rule(
            capacity: Double(rules.codeSendsPerHour), perSecond: Double(rules.codeSendsPerHour) / 3600)
        // Seed 004's SMS sign-in is asked for with a username alone: it has an hourly budget of its
        // own, so a stranger spends that one, never the user's login, step-up and setup codes.
        let budget = purpose == .deviceSignIn ? "code-send-hour-anonymous" : "code-send-hour"
        for (key, rule) in [
            // The cooldown is per flow (or per setup): a new login is not held back by the last one.
            ("code-send:\(userID):\(channel.rawValue):\(flowID?.uuidString ?? purpose.rawValue)", cooldown),
            ("\(budget):\(userID)", hourly),
        ] {
            if case .limited(let retryAfter) = try await request.twofold.rateLimiter.take(key, rule: rule, now: now) {
                throw Problem(
                    status: 429, code: .rateLimited, title: "Wait before asking for another code",
                    detail: "A new code can be sent in \(retryAfter) seconds.", retryAfter: retryAfter)
            }
        }
        var generator = SystemRandomNumberGenerator()
        let code = String(format: "%06d", Int.random(in: 0..<1_000_000, using: &generator))
        let id = UUID()
        let secrets = request.twofold.secrets
        let record = OneTimeCode(
            id: id, userID: userID, channel: channel, purpose: purpose, flowID: flowID,
            destinationCiphertext: try secrets.seal(Array(destination.utf8), boundTo: id),
            codeHash: hash(code, userID: userID, request: request), now: now,
            expiresAt: now.addingTimeInterval(lifetime))
        let minutes = Int((lifetime / 60).rounded(.up))
        let text =
            "Your Twofold code is \(code). It expires in \(minutes) minute\(minutes == 1 ? "" : "s"). Never share it."
        try await request.db.transaction { database in
            try await OneTimeCode.query(on: database).filter(\.$userID == userID).filter(\.$channel == channel)
                .filter(\.$purpose == purpose).filter(\.$usedAt == nil).set(\.$usedAt, to: now).update()
            try await record.create(on: database)
            try await Outbox.enqueue(
                channel, to: destination, subject: "Your Twofold code", body: text, secrets: secrets, now: now,
                on: database)
        }
        return CodeSentResponse(
            nextAllowedAt: now.addingTimeInterval(rules.codeResendAfter),
            maskedDestination: Masking.destination(destination, channel: channel),
            expiresAt: now.addingTimeInterval(lifetime))
    }

    /// Checks `code` against the live code of this kind under the factor guard and uses it up.
    /// Returns the destination it was sent to. Throws the factor's problems.
    ///
    /// Without a live code nothing is guessed, so the guard is not touched and nothing is
    /// counted: the answer is a plain wrong code (issue S item 3). `guardFactor` names the guard
    /// (the channel by default); `countsTowardAccount` is `FactorGuard.failed`'s.
    static func verify(
        _ code: String, channel: OutboxMessage.Channel, purpose: OneTimeCode.Purpose, userID: UUID, flowID: UUID?,
        guardFactor: String? = nil, countsTowardAccount: Bool = true, request: Request
    ) async throws -> String {
        let factor = guardFactor ?? channel.rawValue
        let now = request.twofold.clock.now()
        let maximumFailures = request.twofold.rules.lockAfterFailures
        var query = OneTimeCode.query(on: request.db).filter(\.$userID == userID).filter(\.$channel == channel)
            .filter(\.$purpose == purpose).filter(\.$usedAt == nil).filter(\.$expiresAt > now)
            .filter(\.$failures < maximumFailures)
        if let flowID { query = query.filter(\.$flowID == flowID) }
        guard let live = try await query.sort(\.$createdAt, .descending).first() else { throw wrongCode }
        try await request.twofold.guards.begin(factor, userID: userID)
        let candidate = code.filter { !$0.isWhitespace && $0 != "-" }
        let id = try live.requireID()
        guard ConstantTime.equals(hash(candidate, userID: userID, request: request), live.codeHash) else {
            try await request.sql.raw("UPDATE one_time_codes SET failures = failures + 1 WHERE id = \(bind: id)").run()
            try await request.twofold.guards.failed(
                factor, userID: userID, countsTowardAccount: countsTowardAccount, origin: request.origin)
        }
        let claimed = try await request.sql.raw(
            """
            UPDATE one_time_codes SET used_at = \(bind: now)
            WHERE id = \(bind: id) AND used_at IS NULL AND failures < \(bind: maximumFailures) RETURNING id
            """
        ).all()
        // The right code, used a moment ago by a parallel request: a duplicate, not a guess.
        guard !claimed.isEmpty else {
            try await request.twofold.guards.succeeded(factor, userID: userID)
            throw alreadyUsed
        }
        try await request.twofold.guards.succeeded(factor, userID: userID)
        return String(
            decoding: try request.twofold.secrets.open(live.destinationCiphertext, boundTo: id), as: UTF8.self)
    }

    /// A wrong code, with no count: what is answered when there is no live code to check.
    static let wrongCode = Problem(
        status: 401, code: .invalidCode, title: "Wrong code", detail: "That code is not right.")

    static let alreadyUsed = Problem(
        status: 409, code: .alreadyUsed, title: "Code already used",
        detail: "That code was just used; each code works once.")

    /// HMAC of the code with a key outside the database, bound to the user.
    private static func hash(_ code: String, userID: UUID, request: Request) -> String {
        let key = request.twofold.secrets.lookupKey(purpose: "one-time codes")
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(userID.uuidString):\(code)".utf8), using: key)
        return mac.hexString
    }
}

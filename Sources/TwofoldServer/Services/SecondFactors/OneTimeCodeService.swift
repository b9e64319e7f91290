import Crypto
import Foundation
import TwofoldAPI
import TwofoldCore

/// SMS and email codes (seeds 002, 003): 6 digits, single use, stored as a keyed hash; by
/// default (`ProductRules`) they work 5 minutes, take at most 5 wrong tries each, and a new one is
/// sent at most every 60 seconds and 5 an hour per user. The delivery worker sends the message.
/// Built with what it uses and given values, never a request.
struct OneTimeCodeService: Sendable {
    let store: any OneTimeCodeStore
    let outbox: Outbox
    let rateLimiter: RateLimiter
    let guards: FactorGuard
    let secrets: SecretBox
    let clock: ServerClock
    let rules: ProductRules

    /// What goes to the destination: the code, or a notice in its place (an address that belongs
    /// to another account is answered like a free one, and its owner told, not sent a code).
    enum Message: Sendable {
        case code
        case notice(subject: String, body: String)
    }

    /// Sends a fresh code to `destination`; earlier unused codes of the same kind stop working.
    /// Returns the answer for the client: when the next send is allowed, where it went (masked),
    /// when the code expires. Throws `429 rate_limited` inside the cooldown or over the hourly limit.
    ///
    /// Three writes, ordered so that a server stopping between any two leaves nothing harmful:
    /// the earlier codes end, the code is stored, and only then is its message queued (a code
    /// whose message never went out is asked for again; a message whose code was never stored
    /// cannot happen).
    @discardableResult
    func send(
        _ channel: DeliveryChannel, purpose: OneTimeCodeRecord.Purpose, to destination: String, userID: UUID,
        flowID: UUID?, message: Message = .code, requestedAt: Date? = nil
    ) async throws -> CodeSentResponse {
        // A send made after its request's answer (`BackgroundWork`) is dated by the request.
        let now = requestedAt ?? clock.now()
        let lifetime = rules.codeLifetime
        let cooldown = RateLimiter.Rule(capacity: 1, perSecond: 1 / rules.codeResendAfter)
        let hourly = RateLimiter.Rule(
            capacity: Double(rules.codeSendsPerHour), perSecond: Double(rules.codeSendsPerHour) / 3600)
        // Seed 004's SMS sign-in is asked for with a username alone: it has an hourly budget of its
        // own, so a stranger spends that one, never the user's login, step-up and setup codes.
        // Its codes, cooldown and budget are also per client scope (`ClientScope.flow` is its
        // flow): a stranger elsewhere spends and supersedes only their own (issue T).
        let budget =
            purpose == .deviceSignIn ? "code-send-hour-anonymous:\(flowID?.uuidString ?? "-")" : "code-send-hour"
        var buckets = [
            // The cooldown is per flow (or per setup): a new login is not held back by the last one.
            ("code-send:\(userID):\(channel.rawValue):\(flowID?.uuidString ?? purpose.rawValue)", cooldown),
            ("\(budget):\(userID)", hourly),
        ]
        if purpose == .deviceSignIn {
            // And a ceiling over every scope together, four budgets' worth: strangers from many
            // addresses cannot flood the owner's phone, and the codes they could guess at stay
            // bounded (issue T review).
            buckets.append(
                (
                    "code-send-hour-anonymous-user:\(userID)",
                    RateLimiter.Rule(capacity: hourly.capacity * 4, perSecond: hourly.perSecond * 4)
                ))
        }
        for (key, rule) in buckets {
            if case .limited(let retryAfter) = try await rateLimiter.take(key, rule: rule, now: now) {
                throw Problem(
                    status: 429, code: .rateLimited, title: "Wait before asking for another code",
                    detail: "A new code can be sent in \(retryAfter) seconds.", retryAfter: retryAfter)
            }
        }
        let code = Self.newCode()
        let id = SecureRandom.timeOrderedUUID(at: now)
        let text = "Your Twofold code is \(code). It expires in \(lifetime.inWords). Never share it."
        try await store.supersede(
            userID: userID, channel: channel, purpose: purpose, flowID: purpose == .deviceSignIn ? flowID : nil,
            now: now)
        try await store.insert(
            OneTimeCodeRecord(
                id: id, userID: userID, channel: channel, purpose: purpose, flowID: flowID,
                destinationCiphertext: try secrets.seal(Array(destination.utf8), boundTo: id),
                codeHash: hash(code, userID: userID), createdAt: now, expiresAt: now.addingTimeInterval(lifetime)))
        switch message {
        case .code:
            try await outbox.enqueue(channel, to: destination, subject: "Your Twofold code", body: text, now: now)
        case .notice(let subject, let body):
            // The code is made and stored all the same (the same work, the same answer), but
            // never leaves: nobody can confirm it.
            try await outbox.enqueue(channel, to: destination, subject: subject, body: body, now: now)
        }
        return CodeSentResponse(
            nextAllowedAt: now.addingTimeInterval(rules.codeResendAfter),
            maskedDestination: Masking.destination(destination, channel: channel),
            expiresAt: now.addingTimeInterval(lifetime))
    }

    /// A fresh 6-digit code from the system's CSPRNG (the one way codes sent to people are made).
    static func newCode() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(format: "%06d", Int.random(in: 0..<1_000_000, using: &generator))
    }

    /// The channel of the newest code sent for a login flow, if one was sent.
    func channelSent(forFlow flowID: UUID) async throws -> DeliveryChannel? {
        try await store.latest(flowID: flowID)?.channel
    }

    /// Checks `code` against the live code of this kind under the factor guard and uses it up.
    /// Returns the destination it was sent to. Throws the factor's problems.
    ///
    /// Without a live code nothing is guessed, so the guard is not touched and nothing is
    /// counted: the answer is a plain wrong code (issue S item 3). `guardFactor` names the guard
    /// (the channel by default); `countsTowardAccount` is `FactorGuard.failed`'s.
    func verify(
        _ code: String, channel: DeliveryChannel, purpose: OneTimeCodeRecord.Purpose, userID: UUID,
        flowID: UUID?, guardFactor: String? = nil, countsTowardAccount: Bool = true, waiting: Bool = false,
        origin: RequestOrigin
    ) async throws -> String {
        // A malformed code is a typo: refused before it costs the code or the factor a try.
        let code = try InputValidation.code(code, for: channel.method)
        let factor = guardFactor ?? channel.rawValue
        let now = clock.now()
        let maximumFailures = rules.lockAfterFailures
        guard
            let live = try await store.live(
                userID: userID, channel: channel, purpose: purpose, flowID: flowID, now: now,
                maximumFailures: maximumFailures)
        else {
            // A signed-in step-up's copy of a code a parallel request just used is told so
            // (issue V item 9); anonymous sign-ins keep one answer for every miss.
            if waiting,
                let used = try await store.usedSince(
                    userID: userID, channel: channel, purpose: purpose, flowID: flowID,
                    since: now.addingTimeInterval(-BackupCodeService.duplicateWindow)),
                ConstantTime.equals(hash(code.filter { !$0.isWhitespace && $0 != "-" }, userID: userID), used.codeHash)
            {
                throw Self.alreadyUsed
            }
            throw Self.wrongCode
        }
        try await guards.begin(factor, userID: userID, waiting: waiting)
        let candidate = code.filter { !$0.isWhitespace && $0 != "-" }
        guard ConstantTime.equals(hash(candidate, userID: userID), live.codeHash) else {
            try await store.addFailure(id: live.id)
            try await guards.failed(factor, userID: userID, countsTowardAccount: countsTowardAccount, origin: origin)
        }
        // The right code, used a moment ago by a parallel request: a duplicate, not a guess.
        guard try await store.use(id: live.id, now: now, maximumFailures: maximumFailures) else {
            try await guards.succeeded(factor, userID: userID)
            throw Self.alreadyUsed
        }
        try await guards.succeeded(factor, userID: userID)
        return String(decoding: try secrets.open(live.destinationCiphertext, boundTo: live.id), as: UTF8.self)
    }

    /// A wrong code, with no count: what is answered when there is no live code to check.
    static let wrongCode = Problem(
        status: 401, code: .invalidCode, title: "Wrong code", detail: "That code is not right.")

    static let alreadyUsed = Problem(
        status: 409, code: .alreadyUsed, title: "Code already used",
        detail: "That code was just used; each code works once.")

    /// HMAC of the code with a key outside the database, bound to the user.
    private func hash(_ code: String, userID: UUID) -> String {
        let key = secrets.lookupKey(purpose: "one-time codes")
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(userID.uuidString):\(code)".utf8), using: key)
        return mac.hexString
    }
}

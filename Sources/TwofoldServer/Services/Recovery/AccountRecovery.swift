import Crypto
import Foundation
import TwofoldAPI
import TwofoldCore

/// Account recovery when every factor is lost (seed 000: "email verification + ID document →
/// manual security review"; NIST SP 800-63B rev 4 §4.2), as one use case that the JSON API and
/// the pages call:
///
/// 1. `start`: anyone names an email address. With an account behind it, a code goes there and
///    every address on file hears that recovery started, with a "this wasn't me" link. Without
///    one, the same work is done and nothing is sent, so the answer tells nobody whether the
///    address has an account.
/// 2. `proveEmail`: the code moves the request to review.
/// 3. `decide`: an administrator who stepped up approves or denies it with a note; the document
///    is deleted. Approval sends a single-use pass to the account's email address, which works
///    after the waiting period (`TWOFOLD_RECOVERY_WAIT_SECONDS`) until its lifetime ends.
/// 4. `redeem`: the pass signs in once. Every factor, session and remembered device of the
///    account goes first (`AccountReset`); the new session may only set up a factor
///    (`RecoveryGate`).
///
/// `cancel` ("this wasn't me", 10 days from the start) ends an open request, or, after the pass
/// was used, locks the account for an administrator. Every step that must happen once is one
/// conditional statement in `RecoveryStore`.
struct AccountRecovery: Sendable {
    let configuration: Configuration
    let clock: ServerClock
    let store: any RecoveryStore
    let users: any UserStore
    let rateLimiter: RateLimiter
    let outbox: Outbox
    let secrets: SecretBox
    let audit: Auditor
    let sessions: SessionService
    let reset: AccountReset
    let policy: SignInPolicy
    let factorChanges: FactorChanges

    private var rules: ProductRules { configuration.rules }

    // MARK: The person recovering

    func start(_ body: RecoveryStartRequest, origin: RequestOrigin) async throws -> RecoveryStatus {
        guard configuration.delivers(.email) else {
            throw Problem(
                status: 409, code: .conflict, title: "Recovery is not available",
                detail: "This server sends no email, and recovery starts with a code sent to your email address. "
                    + "Ask your administrator to reset your sign-in methods.")
        }
        var errors: [String: String] = [:]
        let email = InputValidation.email(body.email)
        if email == nil { errors["email"] = "must be an email address" }
        let message = body.message ?? ""
        if let problem = Self.textProblem(message, maximum: RecoveryStartRequest.maximumMessageLength) {
            errors["message"] = problem
        }
        var document: (type: String, bytes: [UInt8])?
        if let attached = body.document {
            switch Self.document(attached) {
            case .success(let checked): document = checked
            case .failure(let refusal): errors["document"] = refusal.reason
            }
        }
        guard errors.isEmpty, let email else { throw InputValidation.failure(errors) }

        let now = clock.now()
        try await rateLimiter.require(
            RateLimiter.addressKey("recovery", address: origin.address), rule: .init(rules.recoveryPerAddress),
            now: now)
        try await rateLimiter.require(
            "recovery-email:\(keyed(email, purpose: "recovery addresses"))", rule: .init(rules.recoveryPerAccount),
            now: now)

        // Only an active account whose address this is, verified: a username typed as an
        // address, a disabled account, or an address never proven (it may be a stranger's) is
        // answered like no account.
        let found = try await users.user(identifier: email)
        let user = found.flatMap { $0.verifiedEmail == email && $0.status != .disabled ? $0 : nil }
        let id = UUID()
        let code = OneTimeCodeService.newCode()
        let record = RecoveryRecord(
            id: id, userID: user?.id, email: email,
            messageCiphertext: try secrets.seal(Array(message.utf8), boundTo: id), state: .pendingEmail,
            codeHash: codeHash(code, requestID: id), cancelTokenHash: SecureToken.hash(cancelToken(for: id)),
            createdAt: now, expiresAt: now.addingTimeInterval(rules.codeLifetime), ipAddress: origin.address,
            userAgent: origin.userAgent.map { String($0.prefix(200)) })
        try await store.insert(
            record,
            document: try document.map {
                RecoveryDocumentRecord(
                    requestID: id, contentType: $0.type, bytes: $0.bytes.count,
                    ciphertext: try secrets.seal($0.bytes, boundTo: id))
            })
        if let user {
            let cancel = link(Pages.recoveryCancel, token: cancelToken(for: id))
            try await outbox.enqueue(
                .email, to: user.email, subject: "Your Twofold recovery code",
                body: "Someone asked to recover your Twofold account \(user.username), which removes its sign-in "
                    + "methods once an administrator approves. Your code is \(code). It expires in "
                    + "\(rules.codeLifetime.inWords). Never share it.\n\nIf this wasn't you, cancel the request: "
                    + "\(cancel)", now: now)
            if configuration.delivers(.sms), let phone = user.verifiedPhone {
                try await outbox.enqueue(
                    .sms, to: phone,
                    body: "Twofold: someone started recovery of your account. If this wasn't you, cancel it: \(cancel)",
                    now: now)
            }
        }
        try await audit.record(
            .recoveryStarted, user: user?.id,
            detail: user == nil
                ? "no account has the address given" : "request \(id)\(document == nil ? "" : " with a document")",
            origin: origin)
        return status(of: record, at: now)
    }

    func status(_ id: UUID?) async throws -> RecoveryStatus {
        status(of: try await find(id), at: clock.now())
    }

    /// The code sent to the account's email address: the request then waits for review.
    func proveEmail(_ id: UUID?, code: String, origin: RequestOrigin) async throws -> RecoveryStatus {
        let code = try InputValidation.code(code, for: .email)
        let record = try await find(id)
        let now = clock.now()
        let maximum = rules.lockAfterFailures
        switch record.state(at: now) {
        case .pendingEmail: break
        case .expired: throw Self.expired
        default:
            throw Problem(
                status: 409, code: .conflict, title: "Email already proven",
                detail: "This request's email address was proven; it waits for review.")
        }
        guard record.codeFailures < maximum else { throw Self.tooManyWrongCodes }
        let candidate = code.filter { !$0.isWhitespace && $0 != "-" }
        guard ConstantTime.equals(codeHash(candidate, requestID: record.id), record.codeHash) else {
            let failures = try await store.addCodeFailure(id: record.id, maximum: maximum) ?? maximum
            guard failures < maximum else { throw Self.tooManyWrongCodes }
            throw Problem(
                status: 401, code: .invalidCode, title: "Wrong code", detail: "That code is not right.",
                attemptsRemaining: maximum - failures)
        }
        guard
            try await store.proveEmail(
                id: record.id, now: now, reviewUntil: now.addingTimeInterval(rules.recoveryReviewLifetime),
                maximumFailures: maximum)
        else {
            // A parallel request proved it first, or the code ran out meanwhile.
            throw Problem(
                status: 409, code: .alreadyUsed, title: "Code already used", detail: "That code was just used.")
        }
        try await audit.record(
            .recoveryEmailProven, user: record.userID, detail: "request \(record.id)", origin: origin)
        return try await status(record.id)
    }

    /// "This wasn't me": ends an open request; after its pass was used, locks the account and
    /// signs it out everywhere, for an administrator to look at.
    func cancel(token: String, origin: RequestOrigin) async throws -> RecoveryStatus {
        guard (1...128).contains(token.count) else {
            throw InputValidation.failure(["token": "must be 1 to 128 characters"])
        }
        guard let record = try await store.request(cancelTokenHash: SecureToken.hash(token)) else {
            throw Problem(status: 404, code: .notFound, title: "No such recovery request", detail: Self.badLink)
        }
        let now = clock.now()
        // Ten days from the request's last news to its owner: the start, the decision, or the
        // pass used (an approval on day 11 of a review still gets a working link).
        let lastNews =
            [record.createdAt, record.decidedAt, record.closedAt].compactMap { $0 }.max() ?? record.createdAt
        guard now < lastNews.addingTimeInterval(rules.recoveryCancelWindow) else {
            throw Problem(
                status: 401, code: .expired, title: "Link expired",
                detail: "This link worked for \(rules.recoveryCancelWindow.inWords). Contact your administrator.")
        }
        let user = try await record.userID.asyncMap { try await users.user(id: $0) } ?? nil
        var current = record
        // Twice at most: an open request the pass completes meanwhile is disowned instead.
        for _ in 0..<2 {
            switch current.state(at: now) {
            case .pendingEmail, .pendingReview, .approved:
                guard try await store.cancel(id: current.id, now: now) else {
                    current = try await find(current.id)
                    continue
                }
                try await store.deleteDocument(requestID: current.id)
                try await audit.record(
                    .recoveryCancelled, user: current.userID, detail: "request \(current.id)", origin: origin)
                if let user {
                    try await factorChanges.notify(
                        user, subject: "Account recovery cancelled",
                        body: "Twofold: the recovery of your account was cancelled from the link in our message. "
                            + "Nothing changed. If someone else started it, they know your email address; consider "
                            + "changing its password.")
                }
            case .completed:
                if let user { try await disown(current, user: user, origin: origin) }
            case .denied, .cancelled, .expired:
                break
            }
            break
        }
        return try await status(record.id)
    }

    /// "This wasn't me" after the pass was used: whatever the recovered session added goes (as
    /// every factor went when the pass was used), every session ends, and the account is locked
    /// for an administrator, who sees why in the audit trail and the review queue.
    private func disown(_ record: RecoveryRecord, user: User, origin: RequestOrigin) async throws {
        // The mark first (once): a redeem still under way sees it after starting its session.
        guard try await store.disown(id: record.id, now: clock.now()) else { return }
        _ = try await users.lock(userID: user.id, now: clock.now())
        try await reset.removeEverySecondFactor(
            of: user, actor: nil, why: "recovery disowned", unlock: false, origin: origin)
        try await audit.record(
            .recoveryDisowned, user: user.id,
            detail: "request \(record.id): \"this wasn't me\" after the pass was used; factors removed, account locked",
            origin: origin)
        try await factorChanges.notify(
            user, subject: "Your account is locked",
            body: "Twofold: you said the recovery of your account was not you. Everything the recovery added was "
                + "removed, every session signed out, and the account locked; an administrator will unlock it with "
                + "you.")
    }

    /// The pass: signs in once, after every factor, session and remembered device of the
    /// account is gone; the session may only set up a factor (`RecoveryGate`).
    func redeem(pass: String, origin: RequestOrigin) async throws -> AuthTokensResponse {
        guard (1...128).contains(pass.count) else {
            throw InputValidation.failure(["pass": "must be 1 to 128 characters"])
        }
        let hash = SecureToken.hash(pass)
        let now = clock.now()
        guard let (requestID, userID) = try await store.complete(passHash: hash, now: now) else {
            throw try await passRefusal(hash: hash, now: now)
        }
        guard let user = try await users.user(id: userID) else { throw Self.invalidPass }
        try await reset.removeEverySecondFactor(of: user, actor: nil, why: "account recovery", origin: origin)
        try await audit.record(
            .recoveryCompleted, user: userID, detail: "signed in with the recovery pass", origin: origin)
        let current = try await users.user(id: userID) ?? user
        // Refused while a disown's reset runs (`SessionEpoch`); the mark is checked either way.
        let started: Result<AuthTokensResponse, any Error>
        do {
            started = .success(
                try await sessions.start(
                    user: current, methods: [Proof.recovery.method.rawValue], proofs: [.recovery],
                    origin: origin))
        } catch {
            started = .failure(error)
        }
        // "This wasn't me" may have landed meanwhile: its mark is set before it signs every
        // session out, so either it saw this session or this check sees the mark, and the lock
        // this redeem's reset may have lifted goes back on. A check that cannot be made leaves no
        // session behind (the reset left the account no other).
        let disowned: Bool
        do {
            disowned = try await store.request(id: requestID)?.disownedAt != nil
        } catch {
            _ = try? await sessions.revokeAll(userID: userID, reason: "recovery check failed")
            throw error
        }
        if disowned {
            _ = try await users.lock(userID: userID, now: clock.now())
            _ = try await sessions.revokeAll(userID: userID, reason: "recovery disowned")
            throw Problem(
                status: 403, code: .accountLocked, title: "Recovery disowned",
                detail: "The account's owner said this recovery was not them. The account is locked.")
        }
        return try started.get()
    }

    private func passRefusal(hash: String, now: Date) async throws -> Problem {
        guard let record = try await store.request(passHash: hash) else { return Self.invalidPass }
        switch record.state(at: now) {
        case .completed:
            return Problem(
                status: 409, code: .alreadyUsed, title: "Pass already used",
                detail: "A recovery pass works once. Start recovery again if you are still locked out.")
        case .expired:
            return Problem(
                status: 401, code: .expired, title: "Pass expired",
                detail: "This recovery pass has expired. Start recovery again.")
        case .approved:
            let wait = max(1, Int((record.usableFrom ?? now).timeIntervalSince(now).rounded(.up)))
            return Problem(
                status: 403, code: .notYetValid, title: "Not yet",
                detail: "This recovery pass works from \(FactorChanges.moment(record.usableFrom ?? now)): a waiting "
                    + "period gives the account's owner time to say it was not them.", retryAfter: wait)
        default:
            return Problem(
                status: 409, code: .conflict, title: "Recovery cancelled", detail: "This recovery was cancelled.")
        }
    }

    // MARK: Administrators

    /// Requests whose email was proven, waiting for review first (the oldest first), then
    /// approved ones whose pass is not used yet.
    func queue(_ page: PageQuery) async throws -> AdminRecoveryResponse {
        let rows = try await store.list(
            states: [.pendingReview, .approved], now: clock.now(), offset: page.range.lowerBound,
            limit: page.range.count)
        return AdminRecoveryResponse(
            requests: try await rows.sorted {
                ($0.0.state == .pendingReview ? 0 : 1) < ($1.0.state == .pendingReview ? 0 : 1)
            }.asyncCompactMap { row in
                guard let userID = row.0.userID else { return nil }
                return try await dto(row.0, userID: userID, username: row.username, document: row.document)
            })
    }

    /// The request's document, opened by the administrator `admin` (audited: someone's identity
    /// document was seen).
    func document(_ id: UUID?, by admin: UUID, origin: RequestOrigin) async throws -> FileContents {
        let record = try await find(id)
        guard let document = try await store.document(requestID: record.id) else {
            throw Problem(
                status: 404, code: .notFound, title: "No document",
                detail: "This request has no document, or it was deleted when the request was decided.")
        }
        try await audit.record(
            .recoveryDocumentViewed, user: record.userID, actor: admin, detail: "request \(record.id)", origin: origin)
        return FileContents(
            data: Data(try secrets.open(document.ciphertext, boundTo: record.id)), contentType: document.contentType)
    }

    /// Approves or denies a request whose email was proven; the administrator steps up first.
    func decide(
        _ id: UUID?, approve: Bool, note: String, by admin: AuthenticatedUser, adminUser: User, origin: RequestOrigin
    ) async throws -> AdminRecoveryRequest {
        try await policy.require(.administer, caller: admin, user: adminUser)
        let trimmed = note.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { throw InputValidation.failure(["note": "is required"]) }
        if let problem = Self.textProblem(trimmed, maximum: RecoveryDecisionRequest.maximumNoteLength) {
            throw InputValidation.failure(["note": problem])
        }
        let record = try await find(id)
        let now = clock.now()
        guard let userID = record.userID, record.state(at: now) == .pendingReview else {
            throw Self.notReviewable(record.state(at: now))
        }
        // A recovery is another person's review: an administrator's own request (their
        // password with their mailbox, say) waits for another administrator.
        guard userID != adminUser.id else {
            throw Problem(
                status: 403, code: .forbidden, title: "Your own recovery",
                detail: "Another administrator decides on a recovery of your own account.")
        }
        let pass = approve ? SecureToken.generate() : nil
        let usableFrom = now.addingTimeInterval(rules.recoveryWait)
        let expiresAt = approve ? usableFrom.addingTimeInterval(rules.recoveryPassLifetime) : record.expiresAt
        guard
            try await store.decide(
                id: record.id, approved: approve, passHash: pass.map(SecureToken.hash),
                usableFrom: approve ? usableFrom : nil, expiresAt: expiresAt, by: admin.userID, note: trimmed, now: now)
        else {
            throw Self.notReviewable(try await find(id).state(at: now))
        }
        try await store.deleteDocument(requestID: record.id)
        try await audit.record(
            approve ? .recoveryApproved : .recoveryDenied, user: userID, actor: admin.userID,
            detail: "request \(record.id): \(trimmed.prefix(200))", origin: origin)
        if let user = try await users.user(id: userID) {
            let cancel = link(Pages.recoveryCancel, token: cancelToken(for: record.id))
            if let pass {
                let waiting =
                    rules.recoveryWait > 0 ? " It works from \(FactorChanges.moment(usableFrom))," : " It works"
                try await outbox.enqueue(
                    .email, to: user.email, subject: "Your Twofold account recovery was approved",
                    body: "Your request to recover your Twofold account \(user.username) was approved. Open this "
                        + "link to sign in once and set up a new sign-in method:\n\n\(link(Pages.recoveryPass, token: pass))"
                        + "\n\n\(waiting) until \(FactorChanges.moment(expiresAt)), once. Signing in with it removes "
                        + "the account's sign-in methods and signs out every session.\n\nIf this wasn't you, cancel "
                        + "it: \(cancel)", now: now)
                if configuration.delivers(.sms), let phone = user.verifiedPhone {
                    try await outbox.enqueue(
                        .sms, to: phone,
                        body: "Twofold: the recovery of your account was approved; a link went to your email. If this "
                            + "wasn't you, cancel it: \(cancel)", now: now)
                }
            } else {
                try await factorChanges.notify(
                    user, subject: "Your Twofold account recovery was denied",
                    body: "Twofold: the request to recover your account was denied after review. Nothing changed. "
                        + "If you did not ask for it, someone knows your email address. If you did, contact your "
                        + "administrator.")
            }
        }
        let decided = try await find(record.id)
        let username = try await users.user(id: userID)?.username ?? ""
        return try await dto(decided, userID: userID, username: username, document: nil)
    }

    // MARK: Parts

    private func find(_ id: UUID?) async throws -> RecoveryRecord {
        guard let id, let record = try await store.request(id: id) else {
            throw Problem(status: 404, code: .notFound, title: "No such recovery request")
        }
        return record
    }

    private func status(of record: RecoveryRecord, at now: Date) -> RecoveryStatus {
        RecoveryStatus(
            recoveryId: record.id, state: record.state(at: now), createdAt: record.createdAt,
            expiresAt: record.expiresAt, usableFrom: record.usableFrom, decidedAt: record.decidedAt)
    }

    /// A request as the reviewer sees it, with what weighs on it: the account's state and how
    /// often its owner disowned a recovery.
    private func dto(
        _ record: RecoveryRecord, userID: UUID, username: String, document: (type: String, bytes: Int)?
    ) async throws -> AdminRecoveryRequest {
        let status = try await users.user(id: userID)?.status.rawValue ?? "disabled"
        let disowned = try await store.disowned(userID: userID)
        return AdminRecoveryRequest(
            id: record.id, state: record.state(at: clock.now()), userId: userID, username: username,
            email: record.email,
            message: String(decoding: try secrets.open(record.messageCiphertext, boundTo: record.id), as: UTF8.self),
            documentType: document?.type, documentBytes: document?.bytes, createdAt: record.createdAt,
            emailVerifiedAt: record.emailVerifiedAt, expiresAt: record.expiresAt, decidedAt: record.decidedAt,
            decidedBy: record.decidedBy, note: record.note, ipAddress: record.ipAddress, userAgent: record.userAgent,
            accountStatus: status, disownedRecoveries: disowned)
    }

    /// The code's keyed hash, bound to its request.
    private func codeHash(_ code: String, requestID: UUID) -> String {
        keyed("\(requestID.uuidString):\(code)", purpose: "recovery codes")
    }

    private func keyed(_ text: String, purpose: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: secrets.lookupKey(purpose: purpose)).hexString
    }

    /// The "this wasn't me" token of a request: derived from its id with a key outside the
    /// database, so every notice can carry it while the database holds only its hash.
    private func cancelToken(for id: UUID) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data(id.uuidString.utf8), using: secrets.lookupKey(purpose: "recovery cancel links"))
        return Base64URL.encode(Array(mac))
    }

    /// A page's address on this server with `token` in its query, for a message.
    private func link(_ page: Page, token: String) -> String {
        "\(configuration.publicURL)/\(page.path)?token=\(token)"
    }

    static let expired = Problem(
        status: 401, code: .expired, title: "Code expired", detail: "The code has expired; start recovery again.")

    static let tooManyWrongCodes = Problem(
        status: 401, code: .invalidCode, title: "Too many wrong codes",
        detail: "This request took too many wrong codes; start recovery again.", attemptsRemaining: 0)

    static let invalidPass = Problem(
        status: 401, code: .unauthorized, title: "Invalid pass", detail: "This recovery pass is not valid.")

    private static let badLink = "This link is not valid. Copy the whole link from the message."

    private static func notReviewable(_ state: RecoveryState) -> Problem {
        Problem(
            status: 409, code: .conflict, title: "Not waiting for review",
            detail: state == .pendingEmail
                ? "The person has not proven the request's email address yet; it cannot be decided."
                : "This request is \(state.rawValue.replacingOccurrences(of: "_", with: " ")); only one waiting for "
                    + "review can be decided.")
    }

    /// Free text people typed (a message, a note): at most `maximum` characters, line breaks
    /// and tabs allowed, no other control or bidirectional character.
    static func textProblem(_ text: String, maximum: Int) -> String? {
        if text.unicodeScalars.count > maximum { return "must be at most \(maximum) characters" }
        let allowed: Set<Unicode.Scalar> = ["\n", "\r", "\t"]
        if text.unicodeScalars.contains(where: { !allowed.contains($0) && InputValidation.isControlOrBidi($0) }) {
            return "must not hold control characters"
        }
        return nil
    }

    struct DocumentRefusal: Error {
        let reason: String
    }

    /// The document's bytes when it is what it says: base64, at most
    /// `RecoveryDocument.maximumBytes`, and a JPEG, PNG or PDF by its first bytes.
    static func document(_ document: RecoveryDocument) -> Result<(type: String, bytes: [UInt8]), DocumentRefusal> {
        guard RecoveryDocument.contentTypes.contains(document.contentType) else {
            return .failure(.init(reason: "must be a JPEG, PNG or PDF file"))
        }
        guard document.data.utf8.count <= (RecoveryDocument.maximumBytes / 3 + 1) * 4 + 4,
            let data = Data(base64Encoded: document.data), !data.isEmpty
        else {
            return .failure(
                .init(reason: "must be base64 of at most \(RecoveryDocument.maximumBytes / 1024 / 1024) MiB"))
        }
        guard data.count <= RecoveryDocument.maximumBytes else {
            return .failure(.init(reason: "must be at most \(RecoveryDocument.maximumBytes / 1024 / 1024) MiB"))
        }
        let magic: [String: [UInt8]] = [
            "image/jpeg": [0xFF, 0xD8, 0xFF], "image/png": [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],
            "application/pdf": Array("%PDF-".utf8),
        ]
        guard let expected = magic[document.contentType], data.starts(with: expected) else {
            return .failure(.init(reason: "is not a \(document.contentType) file"))
        }
        return .success((document.contentType, Array(data)))
    }
}

/// After a recovery's pass is used, and until the account has a second factor again, only the
/// session the pass began may give it one: the password alone neither signs in nor sets up a
/// factor (the password may be what an attacker holds, racing the owner). For seven days; after
/// that the owner who never finished starts recovery again, or signs in with the password.
struct RecoveryHold: Sendable {
    static let duration: TimeInterval = 7 * 86_400

    let store: any RecoveryStore
    let clock: ServerClock

    func holds(userID: UUID) async throws -> Bool {
        try await store.completed(userID: userID, since: clock.now().addingTimeInterval(-Self.duration))
    }

    static let passwordRefused = Problem(
        status: 403, code: .factorSetupRequired, title: "Finish your recovery first",
        detail: "This account was just recovered. Set up a sign-in method in the session the recovery link "
            + "opened, or start recovery again.")
}

extension Sequence {
    /// The non-`nil` results of an asynchronous transform, in order.
    fileprivate func asyncCompactMap<T>(_ transform: (Element) async throws -> T?) async rethrows -> [T] {
        var results: [T] = []
        for element in self {
            if let result = try await transform(element) { results.append(result) }
        }
        return results
    }
}

extension Optional {
    /// The wrapped value through an asynchronous transform.
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}

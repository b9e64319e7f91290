import Foundation
import TwofoldAPI
import TwofoldCore

/// "Approve on your phone" (issue Z), as a use case. The signing-in side, holding a login flow
/// after the password, asks (`start`) and waits (`status`); the phone holding the account's
/// device key, signed in, lists the request (`pending`) and answers it (`decide`), its answer
/// signed by that key over what it showed and the number picked. An approved request then
/// completes its flow once (`SecondStep`, through `use`).
struct PushApprovals: Sendable {
    let store: any PushApprovalStore
    let offer: PushOffer
    let waiters: PushWaiters
    let loginFlows: LoginFlowService
    let sessions: SessionService
    /// A step-up by the phone weighs as a setting (`SignInChange.configure`): a session that
    /// proved only a code (seed 004's SMS sign-in, what a SIM swap hands over) cannot raise
    /// itself by getting the owner to tap a number; it needs the password first.
    let policy: SignInPolicy
    let deviceKeys: DeviceKeyService
    let users: any UserStore
    let audit: Auditor
    let outbox: Outbox
    let channel: PhoneChannel
    let clock: ServerClock
    let rules: ProductRules

    // MARK: The signing-in side

    /// A new request for the flow `token`'s sign-in, replacing the account's waiting one.
    func start(flow token: String, origin: RequestOrigin) async throws -> PushStartResponse {
        let flow = try await loginFlows.active(token)
        return try await open(for: flow.id, .signIn, userID: flow.userID, until: flow.expiresAt, origin: origin)
    }

    /// A new request to step up `caller`'s session (issue Z item 1, "or as a step-up"),
    /// replacing the account's waiting one; `POST /auth/step-up` with `method: push` and the
    /// request's ID then proves the device key once the phone approved.
    func startStepUp(caller: AuthenticatedUser, origin: RequestOrigin) async throws -> PushStartResponse {
        try await admitStepUp(caller)
        return try await open(
            for: caller.sessionID, .stepUp, userID: caller.userID, until: .distantFuture, origin: origin)
    }

    /// A new request of `purpose` for the flow or session `target`, living until `until` at most.
    private func open(
        for target: UUID, _ purpose: PushApprovalRecord.Purpose, userID: UUID, until: Date, origin: RequestOrigin
    ) async throws -> PushStartResponse {
        guard let user = try await users.user(id: userID), user.status == .active else {
            throw Problem.accountLocked
        }
        guard try await deviceKeys.devices(userID: user.id).contains(where: \.holdsKey) else {
            throw Problem(
                status: 422, code: .validationFailed, title: "Method not available",
                detail: "This account has no phone with a device key to approve on.", errors: ["method": "not enabled"])
        }
        let now = clock.now()
        if try await offer.pausedUntil(userID: user.id, now: now) != nil { throw Self.notNow }
        let number = Int.random(in: 10...99)
        var choices = [number]
        while choices.count < 3 {
            let other = Int.random(in: 10...99)
            if !choices.contains(other) { choices.append(other) }
        }
        choices.shuffle()
        let id = SecureRandom.timeOrderedUUID(at: now)
        let expiresAt = min(now.addingTimeInterval(rules.pushLifetime), until)
        var request = PushApprovalRecord(
            id: id, userID: user.id, flowID: target, number: number, choices: choices,
            asking: SessionNames.name(origin.userAgent), place: PlaceNames.of(origin.address), digest: "",
            status: .pending, createdAt: now, expiresAt: expiresAt, ipAddress: origin.address, purpose: purpose)
        request.digest = Self.shown(request).digest
        guard
            try await store.open(
                request, budget: rules.pushPerHour, since: now.addingTimeInterval(-PushOffer.budgetWindow))
        else {
            try await budgetSpent(user: user, request: request, origin: origin)
            throw Self.notNow
        }
        try await audit.record(
            .pushRequested, user: user.id,
            detail: purpose == .stepUp ? "to confirm a session from \(request.place)" : "from \(request.place)",
            origin: origin)
        await waiters.signal(.account(user.id))
        await channel.announce(
            PhoneNotification(
                kind: .approval, id: Self.text(id),
                title: purpose == .stepUp ? "Confirm it's you?" : "Are you signing in?",
                body: purpose == .stepUp
                    ? "\(request.asking) from \(request.place) asks you to confirm it's you. Open to approve or deny."
                    : "\(request.asking) from \(request.place) asks to sign in. Open to approve or deny.",
                expiresAt: expiresAt), to: user.id)
        return PushStartResponse(
            requestId: Self.text(id), number: number, asking: request.asking, place: request.place,
            expiresAt: expiresAt)
    }

    /// The request's state; while it waits, up to `wait` seconds for the phone first.
    func status(_ body: PushStatusRequest) async throws -> PushStatusResponse {
        // Asked after the flow ended too: "This wasn't me" ends it, and the screen says so.
        let flow = try await loginFlows.known(
            try LoginFlowService.token(otpFlowId: body.otpFlowId, tempToken: body.tempToken))
        return try await waitForPhone(body.requestId, wait: body.wait, target: flow.id, .signIn)
    }

    /// A step-up request's state for `caller`'s session, waiting as `status` does.
    func stepUpStatus(_ body: PushStepUpStatusRequest, caller: AuthenticatedUser) async throws -> PushStatusResponse {
        try await waitForPhone(body.requestId, wait: body.wait, target: caller.sessionID, .stepUp)
    }

    private func waitForPhone(
        _ requestID: String, wait: Int?, target: UUID, _ purpose: PushApprovalRecord.Purpose
    ) async throws -> PushStatusResponse {
        let wait = wait ?? PushStatusRequest.longestWait
        guard (0...PushStatusRequest.longestWait).contains(wait) else {
            throw InputValidation.failure([
                "wait": "must be a whole number of seconds from 0 to \(PushStatusRequest.longestWait)"
            ])
        }
        let id = try Self.requestID(requestID)
        let deadline = Date().addingTimeInterval(Double(wait))
        while true {
            let seen = await waiters.generation
            guard let request = try await store.request(id: id), request.flowID == target, request.purpose == purpose
            else { throw Self.unknown }
            let status = effectiveStatus(request)
            let left = min(deadline.timeIntervalSinceNow, request.expiresAt.timeIntervalSince(clock.now()))
            // Answered now when the request is decided, the wait is over, or enough others wait
            // for it already (`PushWaiters.perKey`); otherwise read again once woken.
            guard status == .pending, left > 0,
                await waiters.wait(for: .request(id), seconds: left, since: seen) == .waited
            else { return PushStatusResponse(status: status, message: Self.words(status, purpose)) }
        }
    }

    /// Claims the approved request `requestID` of `flow` for its sign-in: what it proves (the
    /// device key that signed the approval, as that key is now). Runs where the flow is claimed.
    func use(_ requestID: String?, flow: PendingSecondStep) async throws -> Proof {
        try await claim(requestID, target: flow.flowID, .signIn, userID: flow.user.id)
    }

    /// Claims the approved step-up request `requestID` of `caller`'s session: what it proves.
    func useForStepUp(_ requestID: String?, caller: AuthenticatedUser) async throws -> Proof {
        try await admitStepUp(caller)
        return try await claim(requestID, target: caller.sessionID, .stepUp, userID: caller.userID) { proof in
            // A key this session added cannot vouch for it: refused before the approval is used
            // (from the session as the request found it; `StepUp.prove` asks again after).
            if caller.proof.added.contains(proof.factor) { throw StepUp.addedInThisSession(.deviceKey) }
        }
    }

    private func admitStepUp(_ caller: AuthenticatedUser) async throws {
        guard let user = try await users.user(id: caller.userID) else {
            throw BearerAuthentication.unauthorized("The account no longer exists.")
        }
        try await policy.require(.configure, caller: caller, user: user)
    }

    /// The approved request `requestID` of `purpose` for `target`, used once `admit` accepts
    /// what it proves; that proof.
    private func claim(
        _ requestID: String?, target: UUID, _ purpose: PushApprovalRecord.Purpose, userID: UUID,
        admit: (Proof) async throws -> Void = { _ in }
    ) async throws -> Proof {
        guard let requestID else { throw InputValidation.failure(["requestId": "is required"]) }
        let id = try Self.requestID(requestID)
        guard let request = try await store.request(id: id), request.flowID == target, request.purpose == purpose,
            request.userID == userID
        else { throw Self.unknown }
        switch effectiveStatus(request) {
        case .approved: break
        case .pending:
            throw Problem(
                status: 409, code: .conflict, title: "Not approved yet",
                detail: "The request waits for your phone: approve it there first.")
        case .used: throw Self.answered
        default:
            throw Problem(
                status: 401, code: .forbidden, title: "Not approved",
                detail: Self.words(effectiveStatus(request), purpose) ?? "The phone did not approve this.")
        }
        // The key that signed must still be the device's: a device removed or re-keyed since
        // proves nothing.
        guard let deviceID = request.deviceID,
            let device = try await deviceKeys.store.device(deviceID, userID: userID),
            device.holdsKey, device.publicKey == request.signedKey
        else { throw Self.unknown }
        let proof = try DeviceKeyService.proof(of: device)
        try await admit(proof)
        guard try await store.use(id: id, flowID: target, purpose: purpose, now: clock.now()) else {
            throw Self.answered
        }
        return proof
    }

    /// Wakes the waiters of requests made or decided lately, on whichever instance: one query
    /// a second while anyone waits (several instances on one PostgreSQL database).
    func watchOtherInstances() async throws {
        guard await !waiters.isEmpty else { return }
        let since = clock.now().addingTimeInterval(-3)
        for (id, userID) in try await store.changed(since: since) {
            await waiters.signal(.request(id))
            await waiters.signal(.account(userID))
        }
        for userID in try await channel.store.noticed(since: since) {
            await waiters.signal(.account(userID))
        }
    }

    // MARK: The phone

    /// The account's waiting requests and its notices, as `deviceID` (a device of the caller's
    /// with a key) shows them; with no request and no notice newer than `after` (the newest the
    /// phone has), up to `wait` seconds for one first.
    func pending(deviceID: String, user: User, wait: Int?, after: String?) async throws -> PushApprovalsResponse {
        _ = try await deviceKeys.keyDevice(deviceID, userID: user.id)
        let deadline = Date().addingTimeInterval(Double(wait ?? 0))
        while true {
            let seen = await waiters.generation
            let requests = try await store.pending(userID: user.id, now: clock.now())
            let notices = try await channel.notices(userID: user.id)
            let news = !requests.isEmpty || (notices.first.map { $0.id != after } ?? false)
            let left = deadline.timeIntervalSinceNow
            guard !news, left > 0, await waiters.wait(for: .account(user.id), seconds: left, since: seen) == .waited
            else {
                return PushApprovalsResponse(
                    approvals: requests.map { request in
                        PushApprovalDTO(
                            requestId: Self.text(request.id), choices: request.choices, asking: request.asking,
                            place: request.place, createdAt: request.createdAt, expiresAt: request.expiresAt,
                            purpose: request.purpose.wire)
                    }, notices: notices)
            }
        }
    }

    /// The phone's answer. Its signature by the device key (behind Face ID or Touch ID where it
    /// was enrolled so, seed 004's flow A) must cover the request as stored, the number and the
    /// decision; a wrong signature changes nothing. The request is decided once: a replayed or
    /// racing answer is `409`.
    func decide(
        deviceID: String, _ body: PushDecisionRequest, user: User, origin: RequestOrigin
    ) async throws -> PushDecisionResponse {
        let device = try await deviceKeys.keyDevice(deviceID, userID: user.id)
        guard let decision = PushApprovalMessage.Decision(rawValue: body.decision) else {
            throw InputValidation.failure(["decision": "must be approve, deny or notMe"])
        }
        let id = try Self.requestID(body.requestId)
        let signature = try DeviceInput.signature(body.signature)
        if decision == .approve, body.number == nil {
            throw InputValidation.failure(["number": "is required to approve"])
        }
        guard let request = try await store.request(id: id), request.userID == user.id else { throw Self.unknown }
        guard request.status == .pending else { throw Self.answered }
        let now = clock.now()
        guard request.expiresAt > now else { throw Self.expired }
        let message = PushApprovalMessage.signed(
            requestID: Self.text(id), number: decision == .approve ? body.number : nil, decision: decision,
            digest: request.digest)
        guard let keyText = device.publicKey, let key = try? DevicePublicKey(base64: keyText),
            key.isValidSignature(signature, for: message)
        else { throw DeviceKeyService.signatureRefused }
        let status: PushStatus =
            switch decision {
            case .approve: body.number == request.number ? .approved : .wrongNumber
            case .deny: .denied
            case .notMe: .reported
            }
        guard
            try await store.decide(
                id: id, userID: user.id, status: status, deviceID: device.deviceID, key: keyText, now: now)
        else { throw Self.answered }
        await waiters.signal(.request(id))
        try await recordDecision(status, of: request, user: user, origin: origin)
        return PushDecisionResponse(status: status, message: Self.phoneWords(status, request.purpose))
    }

    /// The hourly budget is spent: the owner is told once an hour (and it is audited), since
    /// whoever asks that often may be a stranger with the password.
    private func budgetSpent(user: User, request: PushApprovalRecord, origin: RequestOrigin) async throws {
        let since = request.createdAt.addingTimeInterval(-PushOffer.budgetWindow)
        guard
            try await audit.events(userID: user.id, type: AuditEvent.pushBudgetSpent.rawValue, from: since, limit: 1)
                .isEmpty
        else { return }
        try await audit.record(
            .pushBudgetSpent, user: user.id, detail: "asked from \(request.place) (\(request.asking))", origin: origin)
        try await outbox.enqueue(
            .email, to: user.email, subject: "Your phone was asked too often",
            body: """
                Your phone was asked to approve \(rules.pushPerHour) requests in an hour, the last from \
                \(request.place) (\(request.asking)), so we stopped asking it for now. If this was not you, \
                someone knows your password: change it now. You can still sign in with your codes or a passkey.
                """, now: request.createdAt)
    }

    /// "This wasn't me" ends the sign-in first (before anything that could fail) and tells the
    /// owner; the decision is audited; a refusal that turns push off tells the owner too.
    private func recordDecision(_ status: PushStatus, of request: PushApprovalRecord, user: User, origin: RequestOrigin)
        async throws
    {
        if status == .reported {
            switch request.purpose {
            case .signIn: try await loginFlows.end(flowID: request.flowID)
            case .stepUp:
                try await sessions.revoke(
                    sessionID: request.flowID, ofUser: user.id, reason: "reported on the phone", origin: origin)
            }
        }
        let signingIn = RequestOrigin(address: request.ipAddress, userAgent: nil)
        let event: AuditEvent =
            switch status {
            case .approved: .pushApproved
            case .wrongNumber: .pushWrongNumber
            case .reported: .pushReported
            default: .pushDenied
            }
        let asked: String = request.purpose == .stepUp ? "step-up of a session on" : "sign-in from"
        try await audit.record(
            event, user: user.id, detail: "\(asked) \(request.place) (\(request.asking))", origin: signingIn)
        let now = clock.now()
        if status == .reported {
            let source: String = "\(request.place) (\(request.asking))"
            let what: String =
                request.purpose == .stepUp
                ? "a session of your account on \(source) asked you to confirm it, and it was not you. We signed it out"
                : "a sign-in to your account from \(source) was not you. We stopped it"
            try await outbox.enqueue(
                .email, to: user.email, subject: "Someone has your password",
                body: """
                    You told us \(what). Someone knows your password: change it now, and check your \
                    account's security page.
                    """, now: now)
        }
        guard PushOffer.refusals.contains(status), try await offer.pausedUntil(userID: user.id, now: now) != nil
        else { return }
        let why =
            status == .wrongNumber
            ? "A number was picked on your phone that the signing-in screen did not show"
            : "Your phone refused \(rules.pushDenialsToPause) requests in a row"
        try await audit.record(.pushPaused, user: user.id, detail: why, origin: signingIn)
        try await outbox.enqueue(
            .email, to: user.email, subject: "Approve on your phone is off for now",
            body: """
                \(why), so we stopped asking it for \(rules.pushPause.inWords). If this was not you, \
                someone knows your password: change it now. You can still sign in with your codes or a \
                passkey.
                """, now: now)
    }

    /// A waiting request past its expiry reads `expired`.
    private func effectiveStatus(_ request: PushApprovalRecord) -> PushStatus {
        request.status == .pending && request.expiresAt <= clock.now() ? .expired : request.status
    }

    /// What the phone shows, as its digest covers it.
    static func shown(_ request: PushApprovalRecord) -> PushApprovalMessage.Shown {
        PushApprovalMessage.Shown(
            requestID: text(request.id), choices: request.choices, asking: request.asking, place: request.place,
            createdAt: Int64(request.createdAt.timeIntervalSince1970.rounded(.down)),
            expiresAt: Int64(request.expiresAt.timeIntervalSince1970.rounded(.down)),
            purpose: request.purpose.wire)
    }

    static func text(_ id: UUID) -> String { id.uuidString.lowercased() }

    static func requestID(_ text: String) throws -> UUID {
        guard text.count <= 64, let id = UUID(uuidString: text) else {
            throw InputValidation.failure(["requestId": "must be the requestId this server gave"])
        }
        return id
    }

    /// What the signing-in side is told when the request ended unapproved.
    static func words(_ status: PushStatus, _ purpose: PushApprovalRecord.Purpose = .signIn) -> String? {
        switch status {
        case .denied: purpose == .stepUp ? "Your phone denied this." : "Your phone denied this sign-in."
        case .wrongNumber: "The number picked on your phone was not the one shown here. Try again, or use another way."
        case .reported:
            purpose == .stepUp
                ? "This was reported on your phone as not yours, and this session was signed out."
                : "This sign-in was reported on your phone as not yours, and stopped."
        case .expired: "Nobody answered on the phone in time. Try again, or use another way."
        case .replaced: "A newer request replaced this one."
        default: nil
        }
    }

    /// What the phone is told its decision did.
    static func phoneWords(_ status: PushStatus, _ purpose: PushApprovalRecord.Purpose = .signIn) -> String {
        switch status {
        case .approved: purpose == .stepUp ? "Approved. The change goes on." : "Approved. The sign-in goes on."
        case .wrongNumber: "That was not the number on the screen, so the sign-in was refused."
        case .reported: "Stopped. We emailed you: change your password now."
        default: "Denied. The sign-in was refused."
        }
    }

    static let unknown = Problem(
        status: 404, code: .notFound, title: "No such request", detail: "This approval request is not known.")
    static let answered = Problem(
        status: 409, code: .alreadyUsed, title: "Already answered", detail: "This request was answered already.")
    static let expired = Problem(
        status: 409, code: .expired, title: "Too late", detail: "This request expired before it was answered.")
    /// The budget is spent or the phone's refusals paused push: another way signs in.
    static let notNow = Problem(
        status: 429, code: .rateLimited, title: "Approve on your phone is not available now",
        detail: "Too many approval requests for this account. Use another way to sign in.")
}

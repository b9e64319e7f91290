import Foundation
import NIOCore
import TwofoldAPI

/// The second step of a sign-in (seeds 000, 002, 003), as a use case: a passkey, an
/// authenticator-app, SMS, email or backup code, or a device-key signature completes the login
/// flow the password started, once, and starts the session. The JSON handlers
/// (`SecondStepController`) and, next, the sign-in page call it; neither writes the rules twice.
///
/// The database strategy is chosen once, at start-up (`TwofoldContext`): on PostgreSQL an
/// authenticator-app code's writes go as one statement (`codeSignIns`), elsewhere every
/// second step's writes run as a unit of work next to the database (`unitsOfWork`).
struct SecondStep: Sendable {
    let clock: ServerClock
    let audit: Auditor
    let trustedDevices: TrustedDeviceService
    let sessions: SessionService
    let loginFlows: LoginFlowService
    let totp: TOTPService
    /// An authenticator-app code's writes as one statement: on PostgreSQL only; `nil` elsewhere.
    let codeSignIns: (any CodeSignInStore)?
    /// A passkey's writes as one statement: on PostgreSQL only; `nil` elsewhere.
    let passkeySignIns: (any PasskeySignInStore)?
    let codes: OneTimeCodeService
    let users: any UserStore
    let unitsOfWork: UnitsOfWork
    let rules: ProductRules
    let secondFactors: SecondFactors
    let passkeys: PasskeyService
    let push: PushApprovals

    /// What the person sent: the flow's token, the method and its proof.
    struct Attempt: Sendable {
        var flow: String
        var method: FactorMethod
        var code: String?
        var deviceKey: SecondFactors.DeviceKeyProof?
        var passkey: AuthenticationCredential?
        /// The approved "Approve on your phone" request (`method == .push`).
        var pushRequest: String?
        /// Remember this device (seed 002: 30 days).
        var trustDevice: Bool

        init(
            flow: String, method: FactorMethod, code: String? = nil, deviceKey: SecondFactors.DeviceKeyProof? = nil,
            passkey: AuthenticationCredential? = nil, pushRequest: String? = nil, trustDevice: Bool = false
        ) {
            self.pushRequest = pushRequest
            self.flow = flow
            self.method = method
            self.code = code
            self.deviceKey = deviceKey
            self.passkey = passkey
            self.trustDevice = trustDevice
        }
    }

    /// A completed second step: the session's tokens and what the person is told, and the
    /// remembered device's token when they asked for one (the HTTP layer sets it as a cookie).
    struct SignedIn: Sendable {
        let answer: SecondStepResponse
        let trustedDeviceToken: String?
    }

    /// Options for a passkey assertion that completes the flow `token`, naming the user's passkeys.
    func passkeyOptions(flow token: String) async throws -> PasskeyRequestOptions {
        let flow = try await loginFlows.active(token)
        return try await passkeys.requestOptions(.loginFlow, userID: flow.userID, flowID: flow.id)
    }

    /// Completes the flow `token` with the code last sent for it, by SMS or email (seed 003's
    /// `verify-otp` names no method).
    func completeWithSentCode(
        flow token: String, code: String?, trustDevice: Bool, origin: RequestOrigin, on eventLoop: any EventLoop
    ) async throws -> SignedIn {
        let method = try await sentCodeMethod(flow: token)
        return try await complete(
            Attempt(flow: token, method: method, code: code, trustDevice: trustDevice), origin: origin, on: eventLoop)
    }

    /// The method of the code last sent for the flow `token`.
    func sentCodeMethod(flow token: String) async throws -> FactorMethod {
        guard !token.isEmpty, token.count <= 128 else { throw LoginFlowService.unknownFlow }
        let flow = try await loginFlows.active(token)
        guard let channel = try await codes.channelSent(forFlow: flow.id) else {
            throw Problem(
                status: 409, code: .conflict, title: "No code was sent",
                detail: "No code was sent for this sign-in yet: ask for one first.")
        }
        return channel.method
    }

    /// Another code for the flow `token` by `method` (the account's first code method when
    /// `nil`), after the cooldown and within the hourly limit.
    func resendCode(flow token: String, method: FactorMethod?) async throws -> CodeSentResponse {
        guard !token.isEmpty, token.count <= 128 else { throw LoginFlowService.unknownFlow }
        let flow = try await loginFlows.active(token)
        guard let user = try await users.user(id: flow.userID) else { throw LoginFlowService.unknownFlow }
        let available = try await secondFactors.available(for: user).filter(\.isSentCode)
        guard let method = method ?? available.first, available.contains(method),
            let channel = DeliveryChannel(method), let destination = user.destination(for: channel)
        else {
            throw InputValidation.failure([
                "method": "must be one of this account's code methods: \(available.map(\.rawValue))"
            ])
        }
        return try await codes.send(channel, purpose: .login, to: destination, userID: flow.userID, flowID: flow.id)
    }

    /// Checks the code for the flow's user, consumes the flow once, and starts the session. The
    /// database work runs next to the database (its statements then cost no thread hops and
    /// one commit); signing the access token (before that work for an authenticator-app code,
    /// after it otherwise) and writing the answer do not.
    func complete(_ attempt: Attempt, origin: RequestOrigin, on eventLoop: any EventLoop) async throws -> SignedIn {
        let trustDevice = attempt.trustDevice
        let method = attempt.method
        let flow = try await loginFlows.pending(attempt.flow)
        guard flow.userStatus == .active else { throw Problem.accountLocked }
        let completed: Completed
        if method == .totp {
            completed = try await completeWithTOTP(
                flow, code: attempt.code, trustDevice: trustDevice, origin: origin, on: eventLoop)
        } else if method == .webauthn {
            completed = try await completeWithPasskey(
                flow, attempt.passkey, trustDevice: trustDevice, origin: origin, on: eventLoop)
        } else if method == .push {
            completed = try await unitsOfWork.run(on: eventLoop) {
                let proof = try await loginFlows.claimed(flow) { _ in
                    try await push.use(attempt.pushRequest, flow: flow)
                }
                let session = try sessions.newSession(
                    user: flow.user, epoch: flow.sessionEpoch, methods: [flow.firstFactor, "hwk", "mfa"],
                    proofs: [.password, proof], origin: origin)
                return try await recordSession(
                    session, flow: flow, method: .push, backupCodesRemaining: nil, trustDevice: trustDevice,
                    origin: origin)
            }
        } else {
            // The other factors read what they need of the user from the model.
            guard let user = try await users.user(id: flow.user.id) else {
                throw LoginFlowService.unknownFlow
            }
            completed = try await unitsOfWork.run(on: eventLoop) {
                try await checkAndRecordSession(
                    flow, user: user, method: method, code: attempt.code, deviceKey: attempt.deviceKey,
                    trustDevice: trustDevice, origin: origin)
            }
        }
        let remaining = completed.backupCodesRemaining
        return SignedIn(
            answer: SecondStepResponse(
                tokens: try completed.signedTokens ?? sessions.tokens(for: completed.session),
                backupCodesRemaining: remaining,
                backupCodesLow: remaining.map { $0 <= rules.backupCodesWarnAt },
                trustedDeviceToken: completed.trustedDeviceToken, serverTime: clock.now()),
            trustedDeviceToken: completed.trustedDeviceToken)
    }

    /// What a completed second step wrote.
    struct Completed: Sendable {
        let session: SessionService.Recorded
        let backupCodesRemaining: Int?
        let trustedDeviceToken: String?
        /// The session's tokens, when they were signed before the unit of work.
        var signedTokens: AuthTokensResponse? = nil
    }

    /// The most common second step, an authenticator-app code. The flow, its user and their
    /// secret were read where the request runs (`LoginFlowService.pending`); the code is checked
    /// and the session made there too. The unit of work next to the database is then writes
    /// alone, each re-checking its condition atomically (attempt slot, time step, flow, active
    /// user), so what changed since the read is refused there. The one thread every sign-in's
    /// writes go through does nothing else.
    ///
    /// The access token is signed before the unit too, while it would only wait for its commit
    /// window: after the commit every unit of the group comes back to the event loops at once,
    /// and each signature there (ES256, the largest piece of a sign-in's work on the loops)
    /// delayed the answers queued behind it. The token is handed out only once the unit has
    /// committed; a unit that fails drops it unsent.
    private func completeWithTOTP(
        _ flow: PendingSecondStep, code: String?, trustDevice: Bool, origin: RequestOrigin, on eventLoop: any EventLoop
    ) async throws -> Completed {
        guard let secret = flow.totp else { throw methodNotAvailable(.totp) }
        let code = try InputValidation.code(code, for: .totp)
        let step = try totp.matchingStep(code, secret: secret)
        if step == nil, try totp.isUsedStep(code, secret: secret) {
            throw TOTPService.replayed
        }
        // Made only for a code that may be right: a guess does not pay for a token.
        let session = try step.map { _ in
            try sessions.newSession(
                user: flow.user, epoch: flow.sessionEpoch, methods: [flow.firstFactor, "otp", "mfa"],
                proofs: [.password, .totp(secretID: secret.id)],
                origin: origin)
        }
        let tokens = try session.map { try sessions.tokens(for: $0.recorded) }
        if let codeSignIns, let step, let session, !trustDevice {
            // PostgreSQL: every write of the unit below in one statement (`CodeSignInStore`).
            let now = clock.now()
            let signIn = CodeSignIn(
                flowID: flow.flowID, userID: flow.user.id, credentialID: secret.id, step: Int64(step),
                attemptLimit: rules.lockAfterFailures, now: now, session: session.record,
                refreshToken: session.refreshToken.record,
                audit: audit.entry(
                    .loginSucceeded, user: flow.user.id, detail: "\(flow.firstFactor)+totp", origin: origin))
            switch try await codeSignIns.complete(signIn) {
            case .signedIn:
                return Completed(
                    session: session.recorded, backupCodesRemaining: nil, trustedDeviceToken: nil, signedTokens: tokens)
            case .flowUnavailable: try await loginFlows.explainUnavailable(flow, now: now)
            case .codeRefused: try await totp.explainRefusal(secret: secret)
            }
        }
        if let codeSignIns, step == nil {
            // PostgreSQL: a wrong code that locks nothing, the most common refusal, as one
            // statement too (then the day's count read again, committed, on the same
            // connection); one that locks goes through the unit below.
            let guards = totp.guards
            if let refused = try await codeSignIns.refuse(guards.refusal(userID: secret.userID, now: clock.now())) {
                try await guards.lockAccountIfDue(
                    userID: secret.userID, dayFailures: refused.dayFailures, origin: origin)
                throw guards.wrongCode(attempts: refused.attempts)
            }
        }
        var completed = try await unitsOfWork.run(on: eventLoop) {
            guard let step, let session else {
                try await totp.refuse(userID: secret.userID, origin: origin)
            }
            // A code that may be right claims the flow first: of parallel submissions on one flow,
            // one settles its step and the rest are told the flow is used, none counted wrong.
            try await loginFlows.claimed(flow) { _ in
                try await totp.settle(step, secret: secret)
            }
            return try await recordSession(
                session, flow: flow, method: .totp, backupCodesRemaining: nil, trustDevice: trustDevice,
                origin: origin)
        }
        completed.signedTokens = tokens
        return completed
    }

    /// A passkey, as an authenticator-app code: the assertion is read and verified where the
    /// request runs (the signature check is the largest piece of its work), and the session made
    /// and signed there too; the unit of work next to the database is writes alone, each
    /// conditional (the flow, the challenge, the counter), so what changed since the reads is
    /// refused there.
    private func completeWithPasskey(
        _ flow: PendingSecondStep, _ passkey: AuthenticationCredential?, trustDevice: Bool, origin: RequestOrigin,
        on eventLoop: any EventLoop
    ) async throws -> Completed {
        guard let passkey else { throw InputValidation.failure(["credential": "is required"]) }
        let verified = try await passkeys.verify(
            passkey, purpose: .loginFlow, userID: flow.user.id, flowID: flow.flowID, origin: origin)
        let session = try sessions.newSession(
            user: flow.user, epoch: flow.sessionEpoch, methods: [flow.firstFactor, verified.amr, "mfa"],
            proofs: [.password, .passkey(verified.passkey.credentialID)], origin: origin)
        var tokens = try sessions.tokens(for: session.recorded)
        tokens.passkeyName = verified.passkey.name
        let assertion = verified.assertion
        if let passkeySignIns, !trustDevice, !assertion.backupStateChanged {
            // PostgreSQL: every write of the unit below in one statement (`PasskeySignInStore`).
            let now = clock.now()
            let signIn = PasskeySignIn(
                flowID: flow.flowID, challengeID: verified.challenge.id, credentialID: verified.passkey.credentialID,
                previousCount: verified.passkey.signCount, signCount: Int(assertion.signCount),
                backupEligible: assertion.backupEligible, backedUp: assertion.backedUp, now: now,
                session: session.record, refreshToken: session.refreshToken.record,
                audit: audit.entry(
                    .loginSucceeded, user: flow.user.id, detail: "\(flow.firstFactor)+\(FactorMethod.webauthn)",
                    origin: origin))
            switch try await passkeySignIns.complete(signIn) {
            case .signedIn:
                return Completed(
                    session: session.recorded, backupCodesRemaining: nil, trustedDeviceToken: nil, signedTokens: tokens)
            case .flowUnavailable: try await loginFlows.explainUnavailable(flow, now: now)
            case .assertionRefused: try await passkeys.refused(verified, at: now)
            }
        }
        var completed = try await unitsOfWork.run(on: eventLoop) {
            try await loginFlows.claimed(flow) { _ in _ = try await passkeys.commit(verified, origin: origin) }
            return try await recordSession(
                session, flow: flow, method: .webauthn, backupCodesRemaining: nil, trustDevice: trustDevice,
                origin: origin)
        }
        completed.signedTokens = tokens
        return completed
    }

    /// Any other second step, checked inside its unit of work (its factor reads what it needs
    /// there).
    private func checkAndRecordSession(
        _ flow: PendingSecondStep, user: User, method: FactorMethod, code: String?,
        deviceKey: SecondFactors.DeviceKeyProof?, trustDevice: Bool, origin: RequestOrigin
    ) async throws -> Completed {
        // The flow is claimed before the factor is checked, and given back if it is wrong: of
        // parallel submissions on one flow, only one uses up a backup code or a one-time code.
        let verification = try await loginFlows.claimed(flow) { _ in
            let verification = try await secondFactors.verify(
                method: method, code: code, deviceKey: deviceKey, for: user, flowID: flow.flowID, origin: origin
            )
            if case .notEnabled = verification { throw methodNotAvailable(method) }
            return verification
        }
        switch verification {
        case .notEnabled:
            throw methodNotAvailable(method)
        case .verified(let amr, let proof, let remaining):
            let session = try sessions.newSession(
                user: flow.user, epoch: flow.sessionEpoch, methods: [flow.firstFactor, amr, "mfa"],
                proofs: [.password, proof], origin: origin)
            return try await recordSession(
                session, flow: flow, method: method, backupCodesRemaining: remaining, trustDevice: trustDevice,
                origin: origin)
        }
    }

    /// After a second factor is proven on its claimed flow: writes the session, audits the
    /// sign-in and remembers the device when asked.
    private func recordSession(
        _ session: SessionService.NewSession, flow: PendingSecondStep, method: FactorMethod, backupCodesRemaining: Int?,
        trustDevice: Bool, origin: RequestOrigin
    ) async throws -> Completed {
        let recorded = try await sessions.record(session)
        try await audit.record(
            .loginSucceeded, user: recorded.userID, detail: "\(flow.firstFactor)+\(method)", origin: origin)
        let deviceToken =
            trustDevice
            ? try await trustedDevices.remember(userID: flow.user.id, epoch: flow.sessionEpoch, origin: origin) : nil
        return Completed(
            session: recorded, backupCodesRemaining: backupCodesRemaining, trustedDeviceToken: deviceToken)
    }

    private func methodNotAvailable(_ method: FactorMethod) -> Problem {
        Problem(
            status: 422, code: .validationFailed, title: "Method not available",
            detail: "This account cannot sign in with \(method).", errors: ["method": "not enabled"])
    }
}

import Foundation
import TwofoldAPI
import Vapor

/// The second step of a login flow (seeds 000, 002, 003): a passkey, a TOTP, SMS, email or backup
/// code, or a device-key signature, against the `otpFlowId`/`tempToken` that `POST /auth/login` answered.
struct SecondStepController: EndpointCollection {
    let clock: ServerClock
    let audit: Auditor
    let trustedDevices: TrustedDeviceService
    let sessions: SessionService
    let loginFlows: LoginFlowService
    let totp: TOTPService
    let codeSignIns: (any CodeSignInStore)?
    let codes: OneTimeCodeService
    let users: any UserStore
    let unitsOfWork: UnitsOfWork
    let rules: ProductRules
    let secondFactors: SecondFactors
    let passkeys: PasskeyService

    init(_ context: TwofoldContext) {
        clock = context.clock
        audit = context.audit
        trustedDevices = context.trustedDevices
        sessions = context.sessions
        loginFlows = context.loginFlows
        totp = context.totp
        codeSignIns = context.codeSignIns
        codes = context.codes
        users = context.users
        unitsOfWork = context.unitsOfWork
        rules = context.rules
        secondFactors = context.secondFactors
        passkeys = context.passkeys
    }

    func boot(routes: EndpointRoutes) {
        routes.on(API.SecondStep.validateTOTP, use: validateTOTP)
        routes.on(API.SecondStep.verifyBackupCode, use: verifyBackupCode)
        routes.on(API.SecondStep.verifyBackupCodeSeed000, use: verifyBackupCode)
        routes.on(API.SecondStep.verifyLogin, use: verifyLogin)
        routes.on(API.SecondStep.verifyOTP, use: verifyOTP)
        routes.on(API.SecondStep.resendOTP, use: resendOTP)
        routes.on(API.Passkeys.flowOptions, use: passkeyOptions)
        routes.on(API.Passkeys.flowVerify, use: verifyPasskey)
    }

    /// Seed 000: options for a passkey assertion that completes the flow, naming the user's
    /// passkeys.
    @Sendable func passkeyOptions(request: Request) async throws -> Response {
        let body = try request.decodeJSONBody(PasskeyFlowOptionsRequest.self)
        let flow = try await loginFlows.active(
            try LoginFlowService.token(otpFlowId: body.otpFlowId, tempToken: body.tempToken))
        return try Response.json(try await passkeys.requestOptions(.loginFlow, userID: flow.userID, flowID: flow.id))
    }

    /// Seed 000: a passkey as the second step.
    @Sendable func verifyPasskey(request: Request) async throws -> Response {
        let body = try request.decodeJSONBody(PasskeyFlowVerifyRequest.self)
        return try await complete(
            flow: try LoginFlowService.token(otpFlowId: body.otpFlowId, tempToken: body.tempToken), method: .webauthn,
            code: nil, passkey: body.credential,
            trustDevice: body.trustDevice ?? false, request: request)
    }

    /// Seed 003: the SMS or email code sent for this flow.
    @Sendable func verifyOTP(request: Request) async throws -> Response {
        let body = try request.decodeJSONBody(OTPVerifyRequest.self)
        guard !body.otpFlowId.isEmpty, body.otpFlowId.count <= 128 else { throw LoginFlowService.unknownFlow }
        let flow = try await loginFlows.active(body.otpFlowId)
        guard let channel = try await codes.channelSent(forFlow: flow.id) else {
            throw Problem(
                status: 409, code: .conflict, title: "No code was sent",
                detail: "Ask for one with POST /api/v1/auth/otp/resend.")
        }
        return try await complete(
            flow: body.otpFlowId, method: channel.method, code: body.code,
            trustDevice: body.trustDevice ?? false, request: request)
    }

    /// Seed 003: another code for the flow, after the 60-second cooldown, at most 5 an hour.
    @Sendable func resendOTP(request: Request) async throws -> Response {
        let body = try request.decodeJSONBody(OTPResendRequest.self)
        guard !body.otpFlowId.isEmpty, body.otpFlowId.count <= 128 else { throw LoginFlowService.unknownFlow }
        let flow = try await loginFlows.active(body.otpFlowId)
        guard let user = try await users.user(id: flow.userID) else {
            throw LoginFlowService.unknownFlow
        }
        let available = try await secondFactors.available(for: user).filter(\.isSentCode)
        guard let method = body.method ?? available.first, available.contains(method),
            let channel = DeliveryChannel(method), let destination = user.destination(for: channel)
        else {
            throw InputValidation.failure([
                "method": "must be one of this account's code methods: \(available.map(\.rawValue))"
            ])
        }
        return try Response.json(
            try await codes.send(
                channel, purpose: .login, to: destination, userID: flow.userID, flowID: flow.id))
    }

    @Sendable func validateTOTP(request: Request) async throws -> Response {
        let body = try request.decodeJSONBody(TOTPValidateRequest.self)
        return try await complete(
            flow: body.tempToken, method: .totp, code: body.code, trustDevice: body.trustDevice ?? false,
            request: request)
    }

    @Sendable func verifyBackupCode(request: Request) async throws -> Response {
        let body = try request.decodeJSONBody(BackupCodeVerifyRequest.self)
        return try await complete(
            flow: try LoginFlowService.token(otpFlowId: body.otpFlowId, tempToken: body.tempToken), method: .backup,
            code: body.backupCode, trustDevice: body.trustDevice ?? false,
            request: request)
    }

    /// Seed 002's form: the flow in the body or as the bearer token; `method` defaults to `totp`.
    @Sendable func verifyLogin(request: Request) async throws -> Response {
        let body = try request.decodeJSONBody(MFAVerifyLoginRequest.self)
        guard let flow = body.otpFlowId ?? body.tempToken ?? request.headers.bearerAuthorization?.token else {
            throw InputValidation.failure(["otpFlowId": "is required, or tempToken or a bearer flow token in its place"]
            )
        }
        let method = body.method ?? .totp
        guard [.totp, .backup, .sms, .email, .deviceKey].contains(method) else {
            throw InputValidation.failure(["method": "must be totp, sms, email, backup or deviceKey"])
        }
        return try await complete(
            flow: flow, method: method, code: body.code,
            deviceKey: .init(deviceId: body.deviceId, challengeId: body.challengeId, signature: body.signature),
            trustDevice: body.trustDevice ?? false, request: request)
    }

    /// Checks the code for the flow's user, consumes the flow once, and starts the session. The
    /// database work runs next to the database (its statements then cost no thread hops and
    /// one commit); signing the access token (before that work for an authenticator-app code,
    /// after it otherwise) and writing the answer do not.
    func complete(
        flow token: String, method: FactorMethod, code: String?, deviceKey: SecondFactors.DeviceKeyProof? = nil,
        passkey: AuthenticationCredential? = nil, trustDevice: Bool, request: Request
    ) async throws -> Response {
        let flow = try await loginFlows.pending(token)
        guard flow.userStatus == .active else { throw Problem.accountLocked }
        let completed: Completed
        if method == .totp {
            completed = try await completeWithTOTP(flow, code: code, trustDevice: trustDevice, request: request)
        } else if method == .webauthn {
            completed = try await completeWithPasskey(flow, passkey, trustDevice: trustDevice, request: request)
        } else {
            // The other factors read what they need of the user from the model.
            guard let user = try await users.user(id: flow.user.id) else {
                throw LoginFlowService.unknownFlow
            }
            completed = try await unitsOfWork.run(on: request.eventLoop) {
                try await checkAndRecordSession(
                    flow, user: user, method: method, code: code, deviceKey: deviceKey, trustDevice: trustDevice,
                    request: request)
            }
        }
        let remaining = completed.backupCodesRemaining
        let answer = SecondStepResponse(
            tokens: try completed.signedTokens ?? sessions.tokens(for: completed.session),
            backupCodesRemaining: remaining,
            backupCodesLow: remaining.map { $0 <= rules.backupCodesWarnAt },
            trustedDeviceToken: completed.trustedDeviceToken, serverTime: clock.now())
        let response = Response(
            status: .ok, headers: Response.jsonHeaders, body: .init(string: answer.json))
        if let deviceToken = completed.trustedDeviceToken {
            response.cookies[TrustedDeviceService.cookie] = .trustedDevice(
                deviceToken, lifetime: rules.trustedDeviceLifetime)
        }
        return response
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
        _ flow: PendingSecondStep, code: String?, trustDevice: Bool, request: Request
    ) async throws -> Completed {
        guard let secret = flow.totp else { throw methodNotAvailable(.totp) }
        guard let code, !code.isEmpty, code.count <= 64 else {
            throw InputValidation.failure(["code": "is required"])
        }
        let step = try totp.matchingStep(code, secret: secret)
        if step == nil, try totp.isUsedStep(code, secret: secret) {
            throw TOTPService.replayed
        }
        // Made only for a code that may be right: a guess does not pay for a token.
        let session = step.map { _ in
            sessions.newSession(
                user: flow.user, methods: [flow.firstFactor, "otp", "mfa"],
                proofs: [SessionProofs.password, FactorChanges.factorName(method: .totp)],
                origin: request.origin)
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
                    .loginSucceeded, user: flow.user.id, detail: "\(flow.firstFactor)+totp", origin: request.origin))
            switch try await codeSignIns.complete(signIn) {
            case .signedIn:
                return Completed(
                    session: session.recorded, backupCodesRemaining: nil, trustedDeviceToken: nil, signedTokens: tokens)
            case .flowUnavailable: try await loginFlows.explainUnavailable(flow, now: now)
            case .codeRefused: try await totp.explainRefusal(secret: secret)
            }
        }
        var completed = try await unitsOfWork.run(on: request.eventLoop) {
            guard let step, let session else {
                try await totp.refuse(userID: secret.userID, origin: request.origin)
            }
            // A code that may be right claims the flow first: of parallel submissions on one flow,
            // one settles its step and the rest are told the flow is used, none counted wrong.
            try await loginFlows.claimed(flow) { _ in
                try await totp.settle(step, secret: secret)
            }
            return try await recordSession(
                session, flow: flow, method: .totp, backupCodesRemaining: nil, trustDevice: trustDevice,
                request: request)
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
        _ flow: PendingSecondStep, _ passkey: AuthenticationCredential?, trustDevice: Bool, request: Request
    ) async throws -> Completed {
        guard let passkey else { throw InputValidation.failure(["credential": "is required"]) }
        let verified = try await passkeys.verify(
            passkey, purpose: .loginFlow, userID: flow.user.id, flowID: flow.flowID, origin: request.origin)
        let session = sessions.newSession(
            user: flow.user, methods: [flow.firstFactor, verified.amr, "mfa"],
            proofs: [
                SessionProofs.password,
                FactorChanges.factorName(method: .webauthn, credentialID: verified.passkey.credentialID),
            ], origin: request.origin)
        let tokens = try sessions.tokens(for: session.recorded)
        var completed = try await unitsOfWork.run(on: request.eventLoop) {
            try await loginFlows.claimed(flow) { _ in _ = try await passkeys.commit(verified, origin: request.origin) }
            return try await recordSession(
                session, flow: flow, method: .webauthn, backupCodesRemaining: nil, trustDevice: trustDevice,
                request: request)
        }
        completed.signedTokens = tokens
        return completed
    }

    /// Any other second step, checked inside its unit of work (its factor reads what it needs
    /// there).
    private func checkAndRecordSession(
        _ flow: PendingSecondStep, user: User, method: FactorMethod, code: String?,
        deviceKey: SecondFactors.DeviceKeyProof?, trustDevice: Bool, request: Request
    ) async throws -> Completed {
        // The flow is claimed before the factor is checked, and given back if it is wrong: of
        // parallel submissions on one flow, only one uses up a backup code or a one-time code.
        let verification = try await loginFlows.claimed(flow) { _ in
            let verification = try await secondFactors.verify(
                method: method, code: code, deviceKey: deviceKey, for: user, flowID: flow.flowID, origin: request.origin
            )
            if case .notEnabled = verification { throw methodNotAvailable(method) }
            return verification
        }
        switch verification {
        case .notEnabled:
            throw methodNotAvailable(method)
        case .verified(let amr, let remaining):
            let session = sessions.newSession(
                user: flow.user, methods: [flow.firstFactor, amr, "mfa"],
                proofs: [
                    SessionProofs.password, FactorChanges.factorName(method: method, deviceID: deviceKey?.deviceId),
                ],
                origin: request.origin)
            return try await recordSession(
                session, flow: flow, method: method, backupCodesRemaining: remaining, trustDevice: trustDevice,
                request: request)
        }
    }

    /// After a second factor is proven on its claimed flow: writes the session, audits the
    /// sign-in and remembers the device when asked.
    private func recordSession(
        _ session: SessionService.NewSession, flow: PendingSecondStep, method: FactorMethod, backupCodesRemaining: Int?,
        trustDevice: Bool, request: Request
    ) async throws -> Completed {
        let recorded = try await sessions.record(session)
        try await audit.record(
            .loginSucceeded, user: recorded.userID, detail: "\(flow.firstFactor)+\(method)", origin: request.origin)
        let deviceToken =
            trustDevice
            ? try await trustedDevices.remember(userID: flow.user.id, origin: request.origin) : nil
        return Completed(
            session: recorded, backupCodesRemaining: backupCodesRemaining, trustedDeviceToken: deviceToken)
    }

    private func methodNotAvailable(_ method: FactorMethod) -> Problem {
        Problem(
            status: 422, code: .validationFailed, title: "Method not available",
            detail: "This account cannot sign in with \(method).", errors: ["method": "not enabled"])
    }
}

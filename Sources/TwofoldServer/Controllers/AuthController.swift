import Foundation
import TwofoldAPI
import Vapor

/// Sign-in (seed 003): register, login, refresh, logout, sessions.
struct AuthController: EndpointCollection {
    let configuration: Configuration
    let clock: ServerClock
    let passwords: PasswordHasher
    let audit: Auditor
    let trustedDevices: TrustedDeviceService
    let rateLimiter: RateLimiter
    let sessions: SessionService
    let loginFlows: LoginFlowService
    let codes: OneTimeCodeService
    let users: any UserStore
    let rules: ProductRules
    let secondFactors: SecondFactors
    let passkeys: PasskeyService
    let policy: SignInPolicy
    let factorChanges: FactorChanges

    /// What is trimmed from a typed account name: spaces and tabs (the document's `pattern`).
    static let blanks = CharacterSet(charactersIn: " \t")

    init(_ context: TwofoldContext) {
        configuration = context.configuration
        clock = context.clock
        passwords = context.passwords
        audit = context.audit
        trustedDevices = context.trustedDevices
        rateLimiter = context.rateLimiter
        sessions = context.sessions
        loginFlows = context.loginFlows
        codes = context.codes
        users = context.users
        rules = context.rules
        secondFactors = context.secondFactors
        passkeys = context.passkeys
        policy = context.policy
        factorChanges = context.factorChanges
    }

    func boot(routes: EndpointRoutes) {
        routes.on(API.Auth.register, use: register)
        routes.on(API.Auth.login, use: login)
        routes.on(API.Auth.refresh, use: refresh)
        routes.on(API.Auth.logout, use: logout)
        routes.on(API.Auth.logoutAll, use: logoutAll)
        routes.on(API.Auth.sessions, use: sessions)
        routes.on(API.Auth.revokeSession, use: revokeSession)
        routes.on(API.Auth.stepUp, use: stepUp)
        routes.on(API.Auth.stepUpSend, use: sendStepUpCode)
        routes.on(API.Auth.stepUpPasskeyOptions, use: stepUpPasskeyOptions)
    }

    @Sendable func register(request: Request) async throws -> Response {
        guard configuration.registrationEnabled else {
            throw Problem(
                status: 403, code: .forbidden, title: "Registration is closed",
                detail: "An administrator creates accounts on this server.")
        }
        let body = try request.content.decode(RegisterRequest.self)
        var errors: [String: String] = [:]
        let username = InputValidation.username(body.username)
        let email = InputValidation.email(body.email)
        if username == nil { errors["username"] = "must be 3 to 32 letters, digits, '.', '_' or '-'" }
        if email == nil { errors["email"] = "must be an email address" }
        var phone: String?
        if let number = body.phoneNumber {
            phone = InputValidation.phone(number)
            if phone == nil { errors["phoneNumber"] = "must be in E.164 form, like +14155550123" }
        }
        if let problem = InputValidation.passwordProblem(body.password, username: username, email: email) {
            errors["password"] = problem
        }
        guard errors.isEmpty, let username, let email else { throw InputValidation.failure(errors) }

        let now = clock.now()
        try await rateLimiter.require(
            "register:ip:\(request.clientAddress ?? "-")", rule: .init(rules.registerPerAddress), now: now)

        let hash = try await passwords.hash(body.password)
        let user = User(
            id: UUID(), username: username, email: email, phone: phone, role: .user, passwordHash: hash, now: now)
        guard try await users.insert(user) else {
            throw Problem(
                status: 409, code: .conflict, title: "Account exists",
                detail: "That username or email address is already registered.")
        }
        try await audit.record(.userRegistered, user: user.id, origin: request.origin)
        let response = Response(status: .created)
        try response.content.encode(RegisterResponse(user: user.dto), using: Wire.encoder())
        return response
    }

    @Sendable func login(request: Request) async throws -> Response {
        let body = try request.content.decode(LoginRequest.self)
        // `email` counts when both are given; either may hold an address or a username, and
        // each one given must be a name.
        var errors: [String: String] = [:]
        for (field, value) in [("email", body.email), ("username", body.username)] {
            guard let value else { continue }
            let trimmed = value.trimmingCharacters(in: Self.blanks)
            if trimmed.isEmpty {
                errors[field] = "must not be blank"
            } else if trimmed.unicodeScalars.count > 254 {
                errors[field] = "must be at most 254 characters"
            }
        }
        if body.email == nil, body.username == nil { errors["email"] = "is required, or username in its place" }
        let typed = (body.email ?? body.username ?? "").trimmingCharacters(in: Self.blanks)
        if body.password.isEmpty {
            errors["password"] = "is required"
        } else if body.password.unicodeScalars.count > 256 {
            errors["password"] = "must be at most 256 characters"
        }
        guard errors.isEmpty else { throw InputValidation.failure(errors) }
        let identifier = typed.lowercased()
        let now = clock.now()
        let address = request.clientAddress ?? "-"
        try await rateLimiter.require(
            RateLimiter.signInKey(address: address), rule: .init(rules.loginPerAddress), now: now)
        let user = try await users.user(identifier: identifier)
        // The account buckets are the account's, whichever of its names was typed (issue S item
        // 9: `alice` and `alice@example.com` had a bucket each); an unknown name has its own.
        // Taken before the password is checked, atomically, so parallel guesses cannot all slip
        // past the limit (privacyIDEA #3741).
        let account = user.map { "user:\($0.id.uuidString)" } ?? "name:\(identifier)"
        // A device the owner had remembered is exempt from the account-wide bucket, and that
        // bucket counts failures only (a right password gives its token back): strangers
        // guessing from many addresses cannot hold the owner's own sign-in shut (issue T; the
        // OWASP device-cookie scheme, with the remembered-device token as the cookie).
        var remembered = false
        if let user {
            remembered = try await trustedDevices.recognises(userID: user.id, token: request.trustedDeviceToken)
        }
        let accountKey = "login:account:\(account)"
        // The remembered device has a bucket of its own instead, as tight as one address's, so a
        // leaked device token gives no more guesses than one address does (issue T review).
        let deviceKey = "login:device:\(SecureToken.hash(request.trustedDeviceToken ?? ""))"
        try await rateLimiter.require(
            "login:account-ip:\(account):\(address)", rule: .init(rules.loginPerAccountAndAddress), now: now)
        if remembered {
            try await rateLimiter.require(deviceKey, rule: .init(rules.loginPerAccountAndAddress), now: now)
        } else {
            try await rateLimiter.require(accountKey, rule: .init(rules.loginPerAccount), now: now)
        }
        guard try await passwords.verify(body.password, against: user?.passwordHash), let user else {
            try await audit.record(
                .loginFailed, user: user?.id, detail: "wrong password or unknown account", origin: request.origin)
            throw Problem(
                status: 401, code: .invalidCredentials, title: "Invalid credentials",
                detail: "The email, username or password is wrong.")
        }
        guard user.status == .active else {
            throw Problem.accountLocked
        }
        try await rateLimiter.reset(
            "login:account-ip:\(account):\(address)", rule: .init(rules.loginPerAccountAndAddress),
            now: now)
        if remembered {
            try await rateLimiter.reset(deviceKey, rule: .init(rules.loginPerAccountAndAddress), now: now)
        } else {
            try await rateLimiter.giveBack(accountKey, rule: .init(rules.loginPerAccount))
        }

        let methods = try await secondFactors.available(for: user)
        if !methods.isEmpty, remembered {
            // A remembered device skips the second step; the session records only the password,
            // so sensitive calls still ask for a step-up.
            let tokens = try await sessions.start(
                user: user.dto, methods: ["pwd"], proofs: [SessionProofs.password], origin: request.origin)
            try await audit.record(
                .loginTrustedDevice, user: user.id, detail: "second step skipped", origin: request.origin)
            return try Response.json(tokens)
        }
        if !methods.isEmpty {
            let (token, flow) = try await loginFlows.start(
                userID: user.id, firstFactor: "pwd", origin: request.origin)
            try await audit.record(.loginSecondFactorRequired, user: user.id, origin: request.origin)
            // An SMS or email primary sends its code as soon as the password is accepted.
            // Over the hourly send limit the flow still starts; another method or a later resend
            // completes it.
            if let primary = methods.first.flatMap(DeliveryChannel.init),
                let destination = user.destination(for: primary)
            {
                do {
                    try await codes.send(
                        primary, purpose: .login, to: destination, userID: user.id,
                        flowID: flow.id)
                } catch let problem as Problem where problem.code == .rateLimited {
                    request.logger.notice("login code not sent: send limit reached")
                }
            }
            return try Response.json(
                LoginChallengeResponse(
                    otpFlowId: token, availableMethods: methods,
                    maskedPhone: methods.contains(.sms) ? user.phone.map(Masking.phone) : nil,
                    maskedEmail: methods.contains(.email) ? Masking.email(user.email) : nil,
                    expiresAt: flow.expiresAt, serverTime: now))
        }
        let tokens = try await sessions.start(
            user: user.dto, methods: ["pwd"], proofs: [SessionProofs.password], origin: request.origin)
        try await audit.record(.loginSucceeded, user: user.id, detail: "pwd", origin: request.origin)
        return try Response.json(tokens)
    }

    @Sendable func refresh(request: Request) async throws -> Response {
        let body = try request.content.decode(RefreshRequest.self)
        guard !body.refreshToken.isEmpty, body.refreshToken.count <= 512 else {
            throw InputValidation.failure(["refreshToken": "is required"])
        }
        return try Response.json(try await sessions.refresh(body.refreshToken, origin: request.origin))
    }

    /// Ends the session the refresh token belongs to. Logging out twice is not an error.
    @Sendable func logout(request: Request) async throws -> Response {
        let body = try request.content.decode(RefreshRequest.self)
        try await sessions.logout(refreshToken: body.refreshToken, origin: request.origin)
        return try Response.json(SuccessResponse())
    }

    /// Signs out everywhere: every session, this one included, and every remembered device. The
    /// user is told what can still sign in without the password (issue T item 3); the password
    /// change removes those.
    @Sendable func logoutAll(request: Request) async throws -> Response {
        let caller = try request.caller
        let user = try await request.currentUser(in: users)
        try await policy.require(.signOut, caller: caller, user: user)
        let count = try await sessions.revokeAll(userID: caller.userID, reason: "logout_all")
        try await trustedDevices.revokeAll(userID: caller.userID, origin: request.origin)
        try await audit.record(
            .allSessionsRevoked, user: caller.userID, detail: "\(count) sessions", origin: request.origin)
        try await factorChanges.notify(
            user, subject: "You were signed out everywhere",
            body: "Twofold: every session of your account was signed out and your remembered devices forgotten. "
                + (try await factorChanges.withoutPassword(userID: user.id)))
        return try Response.json(SuccessResponse())
    }

    @Sendable func sessions(request: Request) async throws -> Response {
        let caller = try request.caller
        return try Response.json(
            SessionsResponse(
                sessions: try await sessions.list(userID: caller.userID, current: caller.sessionID)))
    }

    @Sendable func revokeSession(request: Request) async throws -> Response {
        let caller = try request.caller
        try await policy.require(.signOut, caller: caller, user: try await request.currentUser(in: users))
        guard let id = request.parameters.get("sessionID", as: UUID.self) else {
            throw Problem(status: 404, code: .notFound, title: "No such session")
        }
        try await sessions.revoke(
            sessionID: id, ofUser: caller.userID, reason: "revoked_by_user", origin: request.origin)
        return try Response.json(SuccessResponse())
    }

    /// Step-up (seed 000): prove a factor again, or the password; the new access token's
    /// `auth_time` is now, and the session records the proof for `SignInPolicy`.
    @Sendable func stepUp(request: Request) async throws -> Response {
        let caller = try request.caller
        let body = try request.content.decode(StepUpRequest.self)
        let methods = Set(FactorMethod.secondFactors + [.password])
        guard methods.contains(body.method) else {
            throw InputValidation.failure([
                "method": "must be one of \(methods.map(\.rawValue).sorted().joined(separator: ", "))"
            ])
        }
        guard let user = try await users.user(id: caller.userID) else {
            throw BearerAuthentication.unauthorized("The account no longer exists.")
        }
        if body.method == .password {
            return try await stepUpWithPassword(body.password, user: user, request: request)
        }
        let proof = FactorChanges.factorName(
            method: body.method, deviceID: body.deviceId,
            credentialID: body.credential.map { PasskeyService.canonicalID($0.id) })
        // A factor this session added cannot vouch for it (issue S item 1): refused before the
        // factor is checked, so the refusal spends no attempt, and again after, from the session
        // as stored then, for an addition that raced this request.
        if caller.proof.added.contains(proof) { throw Self.addedInThisSession(body.method) }
        let deviceKey = SecondFactors.DeviceKeyProof(
            deviceId: body.deviceId, challengeId: body.challengeId, signature: body.signature)
        switch try await secondFactors.verify(
            method: body.method, code: body.code, deviceKey: deviceKey, passkey: body.credential, for: user,
            origin: request.origin)
        {
        case .notEnabled:
            throw Problem(
                status: 422, code: .validationFailed, title: "Factor not enabled",
                detail: "This account has no \(body.method) factor to step up with.", errors: ["method": "not enabled"])
        case .verified(let amr, _):
            if try await sessions.proof(of: caller).added.contains(proof) {
                throw Self.addedInThisSession(body.method)
            }
            // A code to a phone or mailbox that is not one of the account's factors proves the
            // destination, not a second factor: recorded for the policy, left out of `amr`.
            let kinds = try await secondFactors.credentials(for: user).secondFactorKinds
            let token = try await sessions.stepUp(
                caller: caller, amr: kinds.contains(SessionProofs.kind(proof)) ? amr : nil, proof: proof)
            return try Response.json(StepUpResponse(accessToken: token))
        }
    }

    /// The password re-entered: what a password-only account proves before adding a way in, and
    /// half of what removes a factor (seed 004 scenarios 8 and 9). Throttled as a password change.
    func stepUpWithPassword(_ password: String?, user: User, request: Request) async throws -> Response {
        guard let password, (1...256).contains(password.unicodeScalars.count) else {
            throw InputValidation.failure(["password": "is required (1 to 256 characters)"])
        }
        let now = clock.now()
        let key = "password-change:\(user.id)"
        try await rateLimiter.require(key, rule: .init(rules.passwordChange), now: now)
        guard try await passwords.verify(password, against: user.passwordHash) else {
            try await audit.record(
                .loginFailed, user: user.id, detail: "step-up: wrong password", origin: request.origin)
            throw Problem(
                status: 401, code: .invalidCredentials, title: "Wrong password", detail: "The password is wrong.",
                errors: ["password": "is wrong"])
        }
        try await rateLimiter.reset(key, rule: .init(rules.passwordChange), now: now)
        let token = try await sessions.stepUp(caller: try request.caller, amr: "pwd", proof: SessionProofs.password)
        return try Response.json(StepUpResponse(accessToken: token))
    }

    static func addedInThisSession(_ method: FactorMethod) -> Problem {
        Problem(
            status: 403, code: .stepUpRequired, title: "Factor added in this session",
            detail: "A \(method) factor added in this session cannot confirm it; use a factor you had "
                + "before, or sign in again.", errors: ["method": "was added in this session"])
    }

    /// Options for a passkey assertion that `POST /auth/step-up` (`method: webauthn`) takes,
    /// naming the caller's passkeys.
    @Sendable func stepUpPasskeyOptions(request: Request) async throws -> Response {
        let caller = try request.caller
        return try Response.json(try await passkeys.requestOptions(.stepUp, userID: caller.userID, flowID: nil))
    }

    /// Sends an SMS or email code for `POST /auth/step-up` (`method: sms|email`), to the
    /// destination on file, with the same cooldown and hourly limit as login codes.
    @Sendable func sendStepUpCode(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        let body = try request.content.decode(StepUpSendRequest.self)
        // The verified phone and the address on file, factors or not (`SecondFactors.verify`).
        let codeMethods = DeliveryChannel.allCases.filter { user.destination(for: $0) != nil }.map(\.method)
        guard codeMethods.contains(body.method), let channel = DeliveryChannel(body.method),
            let destination = user.destination(for: channel)
        else {
            throw InputValidation.failure([
                "method": "must be one of this account's code methods: \(codeMethods.map(\.rawValue))"
            ])
        }
        return try Response.json(
            try await codes.send(
                channel, purpose: .stepUp, to: destination, userID: user.id, flowID: nil)
        )
    }

}

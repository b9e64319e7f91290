import Foundation
import Logging
import TwofoldAPI

/// Where a sign-in comes from: the client's address (throttles are per address), the
/// remembered-device token it holds, and what the audit trail records of it.
struct SignInSource: Sendable {
    var address: String?
    var trustedDeviceToken: String?
    /// The device token of an earlier sign-in on this device (`DeviceCookies`).
    var deviceToken: String? = nil
    var origin: RequestOrigin
}

/// The first step of a sign-in (seed 003), as a use case: an account name and its password,
/// throttled per address, per account and address, and per account (or per remembered
/// device); then a session, or a login flow for the second step (`SecondStep`), whose SMS or
/// email code goes out at once when that is the account's first method. The JSON handler and,
/// next, the sign-in page call it.
struct SignIn: Sendable {
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
    let recoveryHold: RecoveryHold
    /// Whether "Approve on your phone" is offered beside the device key (issue Z).
    let pushOffer: PushOffer

    /// What is trimmed from a typed account name: spaces and tabs (the document's `pattern`).
    static let blanks = CharacterSet(charactersIn: " \t")

    /// Checks `attempt`'s password: a session when the account needs no second step (or the
    /// device is remembered), else the login flow the second step completes.
    func start(_ attempt: LoginRequest, from source: SignInSource, logger: Logger) async throws -> LoginOutcome {
        let identifier = try Self.identifier(attempt)
        let now = clock.now()
        try await rateLimiter.require(
            RateLimiter.signInKey(address: source.address), rule: .init(rules.loginPerAddress), now: now)
        let user = try await users.user(identifier: identifier)
        // The account buckets are the account's, whichever of its names was typed (issue S item
        // 9: `alice` and `alice@example.com` had a bucket each); an unknown name has its own.
        // Taken before the password is checked, atomically, so parallel guesses cannot all slip
        // past the limit (privacyIDEA #3741).
        let account = user.map { "user:\($0.id.uuidString)" } ?? "name:\(identifier)"
        // A device the account signed in on before (its device token, OWASP "device cookies",
        // issue V item 3; or a remembered device's token) is exempt from the account-wide
        // bucket, which counts failures only (a right password gives its token back): strangers
        // guessing from many addresses cannot hold the owner's own sign-in shut. Such a device
        // has a bucket of its own instead, as tight as one address's, so a leaked token gives no
        // more guesses than one address does (issue T review).
        var remembered = false
        var knownDevice: String?
        if let user {
            remembered = try await trustedDevices.recognises(userID: user.id, token: source.trustedDeviceToken)
            if remembered {
                knownDevice = source.trustedDeviceToken
            } else if sessions.deviceCookies.recognises(
                source.deviceToken, userID: user.id, epoch: user.sessionEpoch, now: now)
            {
                knownDevice = source.deviceToken
            }
        }
        let accountKey = "login:account:\(account)"
        let deviceKey = "login:device:\(SecureToken.hash(knownDevice ?? ""))"
        let accountAndAddress = RateLimiter.addressKey("login:account:\(account)", address: source.address)
        try await rateLimiter.require(accountAndAddress, rule: .init(rules.loginPerAccountAndAddress), now: now)
        if knownDevice != nil {
            try await rateLimiter.require(deviceKey, rule: .init(rules.loginPerAccountAndAddress), now: now)
        } else {
            try await rateLimiter.require(accountKey, rule: .init(rules.loginPerAccount), now: now)
        }
        guard try await passwords.verify(attempt.password, against: user?.passwordHash), let user else {
            try await audit.record(
                .loginFailed, user: user?.id, detail: "wrong password or unknown account", origin: source.origin)
            throw Problem(
                status: 401, code: .invalidCredentials, title: "Invalid credentials",
                detail: "The email, username or password is wrong.")
        }
        guard user.status == .active else { throw Problem.accountLocked }
        try await rateLimiter.reset(accountAndAddress, rule: .init(rules.loginPerAccountAndAddress), now: now)
        if knownDevice != nil {
            try await rateLimiter.reset(deviceKey, rule: .init(rules.loginPerAccountAndAddress), now: now)
        } else {
            try await rateLimiter.giveBack(accountKey, rule: .init(rules.loginPerAccount))
        }

        let methods = try await secondFactors.available(for: user)
        if methods.isEmpty, try await recoveryHold.holds(userID: user.id) {
            try await audit.record(
                .loginFailed, user: user.id, detail: "password alone during a recovery's hold", origin: source.origin)
            throw RecoveryHold.passwordRefused
        }
        if methods.isEmpty || remembered {
            // A remembered device skips the second step; the session records only the password,
            // so sensitive calls still ask for a step-up.
            let tokens = try await sessions.start(
                user: user, methods: ["pwd"], proofs: [.password], origin: source.origin)
            if methods.isEmpty {
                try await audit.record(.loginSucceeded, user: user.id, detail: "pwd", origin: source.origin)
            } else {
                try await audit.record(
                    .loginTrustedDevice, user: user.id, detail: "second step skipped", origin: source.origin)
            }
            return .signedIn(tokens)
        }
        let (token, flow) = try await loginFlows.start(user: user, firstFactor: "pwd", origin: source.origin)
        try await audit.record(.loginSecondFactorRequired, user: user.id, origin: source.origin)
        // An SMS or email primary sends its code as soon as the password is accepted. Over the
        // hourly send limit the flow still starts; another method or a later resend completes it.
        if let primary = methods.first.flatMap(DeliveryChannel.init), let destination = user.destination(for: primary) {
            do {
                try await codes.send(primary, purpose: .login, to: destination, userID: user.id, flowID: flow.id)
            } catch let problem as Problem where problem.code == .rateLimited {
                logger.notice("login code not sent: send limit reached")
            }
        }
        var offered = methods
        if let key = methods.firstIndex(of: .deviceKey), try await pushOffer.isOffered(to: user.id) {
            offered.insert(.push, at: key + 1)
        }
        return .secondStep(
            LoginChallengeResponse(
                otpFlowId: token, availableMethods: offered,
                maskedPhone: methods.contains(.sms) ? user.phone.map(Masking.phone) : nil,
                maskedEmail: methods.contains(.email) ? Masking.email(user.email) : nil,
                expiresAt: flow.expiresAt, serverTime: now))
    }

    /// The account name typed (`email` counts when both are given; either may hold an address
    /// or a username), lowercased, once `attempt` is well formed.
    static func identifier(_ attempt: LoginRequest) throws -> String {
        var errors: [String: String] = [:]
        for (field, value) in [("email", attempt.email), ("username", attempt.username)] {
            guard let value else { continue }
            let trimmed = value.trimmingCharacters(in: blanks)
            if trimmed.isEmpty {
                errors[field] = "must not be blank"
            } else if trimmed.unicodeScalars.count > 254 {
                errors[field] = "must be at most 254 characters"
            }
        }
        if attempt.email == nil, attempt.username == nil { errors["email"] = "is required, or username in its place" }
        if attempt.password.isEmpty {
            errors["password"] = "is required"
        } else if attempt.password.unicodeScalars.count > 256 {
            errors["password"] = "must be at most 256 characters"
        }
        guard errors.isEmpty else { throw InputValidation.failure(errors) }
        return (attempt.email ?? attempt.username ?? "").trimmingCharacters(in: blanks).lowercased()
    }
}

/// Opening an account (`POST /auth/register`), as a use case: the names and password checked,
/// throttled per address, the account stored and audited.
struct Registration: Sendable {
    let enabled: Bool
    let clock: ServerClock
    let passwords: PasswordHasher
    let audit: Auditor
    let rateLimiter: RateLimiter
    let users: any UserStore
    let rules: ProductRules
    let emailVerification: EmailVerification

    /// `403` when registration is closed: asked before the form is read, so a closed server
    /// answers so whatever was sent.
    func requireOpen() throws {
        guard enabled else {
            throw Problem(
                status: 403, code: .forbidden, title: "Registration is closed",
                detail: "An administrator creates accounts on this server.")
        }
    }

    func register(_ form: RegisterRequest, from source: SignInSource) async throws -> User {
        try requireOpen()
        var errors: [String: String] = [:]
        let username = InputValidation.username(form.username)
        let email = InputValidation.email(form.email)
        if username == nil { errors["username"] = "must be 3 to 32 letters, digits, '.', '_' or '-'" }
        if email == nil { errors["email"] = "must be an email address" }
        var phone: String?
        if let number = form.phoneNumber {
            phone = InputValidation.phone(number)
            if phone == nil { errors["phoneNumber"] = "must be in E.164 form, like +14155550123" }
        }
        if let problem = InputValidation.passwordProblem(form.password, username: username, email: email) {
            errors["password"] = problem
        }
        guard errors.isEmpty, let username, let email else { throw InputValidation.failure(errors) }

        let now = clock.now()
        try await rateLimiter.require(
            RateLimiter.addressKey("register", address: source.address), rule: .init(rules.registerPerAddress),
            now: now)
        let hash = try await passwords.hash(form.password)
        let user = User(
            id: UUID(), username: username, email: email, phone: phone, role: .user, passwordHash: hash, now: now)
        guard try await users.insert(user) else {
            throw Problem(
                status: 409, code: .conflict, title: "Account exists",
                detail: "That username or email address is already registered.")
        }
        try await audit.record(.userRegistered, user: user.id, origin: source.origin)
        try await emailVerification.sendLink(to: user, origin: source.origin)
        return user
    }
}

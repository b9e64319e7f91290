import Foundation
import Logging
import NIOPosix
import TwofoldSQLite
import Vapor

/// The composition root: every service, built once in `configure` with its stores and the
/// other services it uses, and handed to the controllers it builds.
final class TwofoldContext: Sendable {
    let configuration: Configuration
    let clock: ServerClock
    let tokens: TokenService
    let passwords: PasswordHasher
    let secrets: SecretBox
    let delivery: DeliveryWorker
    /// Twofold's own connection to an SQLite file, which `database` uses; `nil` otherwise.
    let sqlite: DirectSQLite?
    /// The database the stores run their statements on.
    let database: DatabaseExecutor
    let unitsOfWork: UnitsOfWork
    let audit: Auditor
    let trustedDevices: TrustedDeviceService
    let rateLimiter: RateLimiter
    let sessions: SessionService
    let guards: FactorGuard
    let loginFlows: LoginFlowService
    /// An authenticator-app second step's writes as one statement: on PostgreSQL only (see
    /// `CodeSignInStore`); `nil` elsewhere.
    let codeSignIns: (any CodeSignInStore)?
    /// A passkey second step's writes as one statement, likewise.
    let passkeySignIns: (any PasskeySignInStore)?
    let totp: TOTPService
    let backupCodes: BackupCodeService
    let outbox: Outbox
    let codes: OneTimeCodeService
    let housekeeping: Housekeeping
    let users: any UserStore
    let deviceKeys: DeviceKeyService
    let passkeys: PasskeyService
    let secondFactors: SecondFactors
    /// Who may change how an account signs in (issue T): every such endpoint asks it.
    let policy: SignInPolicy
    let factorChanges: FactorChanges
    let secondStep: SecondStep
    /// "Approve on your phone" (issue Z).
    let push: PushApprovals
    /// The channel to the account's phones: their long poll and Apple's push service.
    let phones: PhoneChannel
    /// Where phone notifications are sent from (stopped at shutdown).
    let phoneWork: [BackgroundWork]
    let signIn: SignIn
    let registration: Registration
    let stepUp: StepUp
    let deviceEnrolment: DeviceEnrolment
    let deviceSignIn: DeviceSignIn
    /// Work requests start and do not wait for (`DeviceSignIn.requestOTP`'s lookup and send).
    let background: BackgroundWork
    let accountChanges: AccountChanges
    let factorSettings: FactorSettings
    let passkeyManagement: PasskeyManagement
    let passwordlessSignIn: PasswordlessSignIn
    let deviceFactors: DeviceFactors
    let administration: Administration
    let recovery: AccountRecovery
    let emailVerification: EmailVerification
    let passwordReset: PasswordReset
    let signOut: SignOut
    let idempotency: Idempotency
    /// The attributes of the cookies the server sets, from the origins it serves.
    let cookies: CookieRules

    /// The product rules (throttles, lockouts, lifetimes), from the configuration.
    var rules: ProductRules { configuration.rules }

    /// The services on the SQL stores of `database` (the server's).
    convenience init(
        configuration: Configuration, clock: ServerClock, tokens: TokenService, passwords: PasswordHasher,
        secrets: SecretBox, delivery: DeliveryWorker, sqlite: DirectSQLite?, database: DatabaseExecutor,
        phoneDelivery: (any PhoneNotificationDelivery)? = nil
    ) {
        self.init(
            configuration: configuration, clock: clock, tokens: tokens, passwords: passwords, secrets: secrets,
            delivery: delivery, sqlite: sqlite, database: database, stores: .sql(database),
            phoneDelivery: phoneDelivery)
    }

    /// The services on `stores` (the tests' in-memory ones, or the server's).
    init(
        configuration: Configuration, clock: ServerClock, tokens: TokenService, passwords: PasswordHasher,
        secrets: SecretBox, delivery: DeliveryWorker, sqlite: DirectSQLite?, database: DatabaseExecutor,
        stores: Stores, phoneDelivery: (any PhoneNotificationDelivery)? = nil
    ) {
        self.configuration = configuration
        self.clock = clock
        self.tokens = tokens
        self.passwords = passwords
        self.secrets = secrets
        self.delivery = delivery
        self.sqlite = sqlite
        self.database = database
        self.unitsOfWork = UnitsOfWork(direct: sqlite)
        let audit = Auditor(store: stores.audit, clock: clock)
        self.audit = audit
        self.trustedDevices = TrustedDeviceService(
            store: stores.trustedDevices, audit: audit, clock: clock,
            lifetime: configuration.rules.trustedDeviceLifetime)
        self.rateLimiter = RateLimiter(store: stores.rateLimits)
        self.sessions = SessionService(
            store: stores.sessions, signer: tokens, audit: audit, clock: clock,
            refreshTokenLifetime: configuration.refreshTokenLifetime, deviceCookies: DeviceCookies(secrets: secrets))
        let users = stores.users
        self.users = users
        self.guards = FactorGuard(
            store: stores.guards, users: users, sessions: sessions, audit: audit, clock: clock,
            rules: configuration.rules)
        self.codeSignIns = stores.codeSignIns
        self.passkeySignIns = stores.passkeySignIns
        self.loginFlows = LoginFlowService(
            store: stores.loginFlows, users: users, clock: clock, lifetime: configuration.rules.loginFlowLifetime)
        self.totp = TOTPService(
            store: stores.totp, guards: guards, secrets: secrets, clock: clock,
            issuer: configuration.totpIssuer, pendingLifetime: configuration.rules.pendingTOTPLifetime)
        self.backupCodes = BackupCodeService(
            store: stores.backupCodes, guards: guards, secrets: secrets, hashing: passwords.threadPool, clock: clock)
        self.outbox = Outbox(store: stores.outbox, secrets: secrets)
        self.codes = OneTimeCodeService(
            store: stores.oneTimeCodes, outbox: outbox, rateLimiter: rateLimiter, guards: guards,
            secrets: secrets, clock: clock, rules: configuration.rules)
        let challenges = ChallengeThrottle(
            rateLimiter: rateLimiter, rule: .init(configuration.rules.challengesPerUser), clock: clock)
        self.deviceKeys = DeviceKeyService(
            store: stores.devices, guards: guards, passwords: passwords, audit: audit,
            clock: clock, rules: configuration.rules, challenges: challenges)
        self.passkeys = PasskeyService(
            store: stores.passkeys, audit: audit, clock: clock, settings: configuration.webAuthn,
            ceremonies: ThreadPoolExecutor(pool: passwords.threadPool), challenges: challenges)
        self.secondFactors = SecondFactors(
            users: users, totp: totp, codes: codes, backupCodes: backupCodes, deviceKeys: deviceKeys,
            trustedDevices: trustedDevices, passkeys: passkeys)
        let recoveryHold = RecoveryHold(store: stores.recovery, clock: clock)
        self.policy = SignInPolicy(
            secondFactors: secondFactors, sessions: sessions, clock: clock, window: configuration.rules.stepUpWindow,
            recoveryHold: recoveryHold)
        self.factorChanges = FactorChanges(
            sessions: sessions, deviceKeys: deviceKeys, passkeys: passkeys, outbox: outbox,
            configuration: configuration, clock: clock, users: users, secondFactors: secondFactors, audit: audit)
        let pushOffer = PushOffer(store: stores.pushApprovals, clock: clock, rules: configuration.rules)
        let waiters = PushWaiters()
        let phoneWork = (0..<4).map { _ in BackgroundWork(limit: 1_000) }
        self.phoneWork = phoneWork
        self.phones = PhoneChannel(
            store: stores.phones, deviceKeys: deviceKeys, policy: policy, waiters: waiters, delivery: phoneDelivery,
            work: phoneWork,
            clock: clock, logger: Logger(label: "twofold.phones"))
        self.push = PushApprovals(
            store: stores.pushApprovals, offer: pushOffer, waiters: waiters, loginFlows: loginFlows,
            sessions: sessions, policy: policy, deviceKeys: deviceKeys, users: users, audit: audit, outbox: outbox,
            channel: phones,
            clock: clock,
            rules: configuration.rules)
        self.secondStep = SecondStep(
            clock: clock, audit: audit, trustedDevices: trustedDevices, sessions: sessions, loginFlows: loginFlows,
            totp: totp, codeSignIns: codeSignIns, passkeySignIns: passkeySignIns, codes: codes, users: users,
            unitsOfWork: unitsOfWork,
            rules: configuration.rules, secondFactors: secondFactors, passkeys: passkeys, push: push)
        self.signIn = SignIn(
            clock: clock, passwords: passwords, audit: audit, trustedDevices: trustedDevices, rateLimiter: rateLimiter,
            sessions: sessions, loginFlows: loginFlows, codes: codes, users: users, rules: configuration.rules,
            secondFactors: secondFactors, recoveryHold: recoveryHold, pushOffer: pushOffer)
        let emailLinks = EmailLinks(store: stores.emailLinks, clock: clock, configuration: configuration)
        let emailVerification = EmailVerification(
            configuration: configuration, clock: clock, links: emailLinks, users: users, outbox: outbox, audit: audit,
            rateLimiter: rateLimiter, rules: configuration.rules)
        self.emailVerification = emailVerification
        self.registration = Registration(
            enabled: configuration.registrationEnabled, clock: clock, passwords: passwords, audit: audit,
            rateLimiter: rateLimiter, users: users, rules: configuration.rules, emailVerification: emailVerification)
        let passwordReentry = PasswordReentry(
            passwords: passwords, rateLimiter: rateLimiter, rules: configuration.rules, clock: clock)
        self.stepUp = StepUp(
            passwordReentry: passwordReentry, audit: audit, sessions: sessions, codes: codes, users: users,
            secondFactors: secondFactors, passkeys: passkeys, push: push)
        self.deviceEnrolment = DeviceEnrolment(
            clock: clock, passwords: passwords, audit: audit, outbox: outbox, users: users, deviceKeys: deviceKeys,
            secondFactors: secondFactors, factorChanges: factorChanges, policy: policy)
        let background = BackgroundWork()
        self.background = background
        self.deviceSignIn = DeviceSignIn(
            clock: clock, audit: audit, rateLimiter: rateLimiter, sessions: sessions, loginFlows: loginFlows,
            codes: codes, users: users, deviceKeys: deviceKeys, rules: configuration.rules, background: background)
        self.cookies = CookieRules(
            origins: configuration.webAuthn.origins, production: configuration.mode == .production)
        self.accountChanges = AccountChanges(
            configuration: configuration, clock: clock, passwords: passwords, passwordReentry: passwordReentry,
            audit: audit, trustedDevices: trustedDevices, sessions: sessions, codes: codes, users: users,
            deviceKeys: deviceKeys, secondFactors: secondFactors, factorChanges: factorChanges, policy: policy,
            passkeys: passkeys)
        self.factorSettings = FactorSettings(
            configuration: configuration, clock: clock, audit: audit, trustedDevices: trustedDevices, totp: totp,
            backupCodes: backupCodes, codes: codes, users: users, secondFactors: secondFactors,
            factorChanges: factorChanges, policy: policy, passkeys: passkeys)
        self.passkeyManagement = PasskeyManagement(
            clock: clock, backupCodes: backupCodes, secondFactors: secondFactors, factorChanges: factorChanges,
            policy: policy, passkeys: passkeys)
        self.passwordlessSignIn = PasswordlessSignIn(
            clock: clock, audit: audit, sessions: sessions, users: users, passkeys: passkeys,
            rateLimiter: rateLimiter, rules: configuration.rules)
        self.deviceFactors = DeviceFactors(
            configuration: configuration, passwords: passwords, audit: audit, deviceKeys: deviceKeys,
            rules: configuration.rules, policy: policy)
        let reset = AccountReset(
            clock: clock, audit: audit, users: users, totp: totp, backupCodes: backupCodes, deviceKeys: deviceKeys,
            passkeys: passkeys, trustedDevices: trustedDevices, sessions: sessions, guards: guards,
            factorChanges: factorChanges)
        self.administration = Administration(
            clock: clock, audit: audit, sessions: sessions, guards: guards, users: users, reset: reset, policy: policy,
            recoveries: stores.recovery)
        self.recovery = AccountRecovery(
            configuration: configuration, clock: clock, store: stores.recovery, users: users,
            rateLimiter: rateLimiter, outbox: outbox, secrets: secrets, audit: audit, sessions: sessions,
            reset: reset, policy: policy, factorChanges: factorChanges)
        self.passwordReset = PasswordReset(
            clock: clock, links: emailLinks, users: users, passwords: passwords, audit: audit,
            rateLimiter: rateLimiter, outbox: outbox, secrets: secrets, sessions: sessions,
            trustedDevices: trustedDevices, secondFactors: secondFactors, codes: codes, deviceKeys: deviceKeys,
            passkeys: passkeys, factorChanges: factorChanges, rules: configuration.rules, configuration: configuration,
            background: background)
        self.signOut = SignOut(
            audit: audit, sessions: sessions, trustedDevices: trustedDevices, policy: policy,
            factorChanges: factorChanges)
        self.idempotency = Idempotency(store: stores.idempotency, secrets: secrets, clock: clock)
        self.housekeeping = Housekeeping(
            idempotency: stores.idempotency, totp: stores.totp, loginFlows: stores.loginFlows,
            sessions: stores.sessions,
            rateLimits: stores.rateLimits, guards: stores.guards, devices: stores.devices, passkeys: stores.passkeys,
            recovery: stores.recovery, emailLinks: stores.emailLinks, pushApprovals: stores.pushApprovals,
            phones: stores.phones, audit: audit)
    }

    /// Every store the services keep their state in.
    struct Stores: Sendable {
        /// The statements the stores name, which PostgreSQL prepares once per connection.
        static let prepared: [any PreparedText.Type] = [
            PendingSecondStep.PostgresText.self, SQLCodeSignInStore.PostgresText.self,
            SQLCodeSignInStore.RefusalText.self, SQLPasskeySignInStore.PostgresText.self,
            SQLFactorGuardStore.TallyText.self,
        ]

        var audit: any AuditStore
        var trustedDevices: any TrustedDeviceStore
        var rateLimits: any RateLimitStore
        var sessions: any SessionStore
        var users: any UserStore
        var guards: any FactorGuardStore
        var loginFlows: any LoginFlowStore
        var totp: any TOTPCredentialStore
        var backupCodes: any BackupCodeStore
        var outbox: any OutboxStore
        var oneTimeCodes: any OneTimeCodeStore
        var devices: any DeviceStore
        var passkeys: any PasskeyStore
        var idempotency: any IdempotencyStore
        var recovery: any RecoveryStore
        var emailLinks: any EmailLinkStore
        var pushApprovals: any PushApprovalStore
        var phones: any PhoneChannelStore
        /// An authenticator-app second step's writes as one statement: on PostgreSQL only (see
        /// `CodeSignInStore`); `nil` elsewhere, where they run as a unit of work.
        var codeSignIns: (any CodeSignInStore)?
        /// A passkey second step's writes as one statement: on PostgreSQL only (see
        /// `PasskeySignInStore`); `nil` elsewhere.
        var passkeySignIns: (any PasskeySignInStore)?

        /// The SQL stores on `database`.
        static func sql(_ database: DatabaseExecutor) -> Stores {
            Stores(
                audit: SQLAuditStore(database: database), trustedDevices: SQLTrustedDeviceStore(database: database),
                rateLimits: SQLRateLimitStore(database: database), sessions: SQLSessionStore(database: database),
                users: SQLUserStore(database: database), guards: SQLFactorGuardStore(database: database),
                loginFlows: SQLLoginFlowStore(database: database), totp: SQLTOTPCredentialStore(database: database),
                backupCodes: SQLBackupCodeStore(database: database), outbox: SQLOutboxStore(database: database),
                oneTimeCodes: SQLOneTimeCodeStore(database: database), devices: SQLDeviceStore(database: database),
                passkeys: SQLPasskeyStore(database: database), idempotency: SQLIdempotencyStore(database: database),
                recovery: SQLRecoveryStore(database: database), emailLinks: SQLEmailLinkStore(database: database),
                pushApprovals: SQLPushApprovalStore(database: database),
                phones: SQLPhoneChannelStore(database: database),
                codeSignIns: database.postgres == nil ? nil : SQLCodeSignInStore(database: database),
                passkeySignIns: database.postgres == nil ? nil : SQLPasskeySignInStore(database: database))
        }
    }

    struct Key: StorageKey {
        typealias Value = TwofoldContext
    }
}

extension Application {
    /// Set once, by `configure(_:with:)`, which builds the controllers from it; commands and
    /// tests read it too. Requests never do: each controller holds what it uses.
    var twofold: TwofoldContext {
        get {
            guard let context = storage[TwofoldContext.Key.self] else {
                fatalError("configure(_:with:) sets up the Twofold context first")
            }
            return context
        }
        set {
            precondition(storage[TwofoldContext.Key.self] == nil, "the Twofold context is set once")
            storage[TwofoldContext.Key.self] = newValue
        }
    }
}

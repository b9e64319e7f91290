import Foundation
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

    /// The product rules (throttles, lockouts, lifetimes), from the configuration.
    var rules: ProductRules { configuration.rules }

    init(
        configuration: Configuration, clock: ServerClock, tokens: TokenService, passwords: PasswordHasher,
        secrets: SecretBox, delivery: DeliveryWorker, sqlite: DirectSQLite?, database: DatabaseExecutor
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
        let audit = Auditor(store: SQLAuditStore(database: database), clock: clock)
        self.audit = audit
        self.trustedDevices = TrustedDeviceService(
            store: SQLTrustedDeviceStore(database: database), audit: audit, clock: clock,
            lifetime: configuration.rules.trustedDeviceLifetime)
        self.rateLimiter = RateLimiter(store: SQLRateLimitStore(database: database))
        self.sessions = SessionService(
            store: SQLSessionStore(database: database), signer: tokens, audit: audit, clock: clock,
            refreshTokenLifetime: configuration.refreshTokenLifetime)
        let users = SQLUserStore(database: database)
        self.users = users
        self.guards = FactorGuard(
            store: SQLFactorGuardStore(database: database), users: users, sessions: sessions, audit: audit,
            clock: clock, rules: configuration.rules)
        self.codeSignIns = database.postgres == nil ? nil : SQLCodeSignInStore(database: database)
        self.loginFlows = LoginFlowService(
            store: SQLLoginFlowStore(database: database), users: users, clock: clock,
            lifetime: configuration.rules.loginFlowLifetime)
        self.totp = TOTPService(
            store: SQLTOTPCredentialStore(database: database), guards: guards, secrets: secrets, clock: clock,
            issuer: configuration.totpIssuer, pendingLifetime: configuration.rules.pendingTOTPLifetime)
        self.backupCodes = BackupCodeService(
            store: SQLBackupCodeStore(database: database), guards: guards, secrets: secrets,
            hashing: passwords.threadPool, clock: clock)
        self.outbox = Outbox(store: SQLOutboxStore(database: database), secrets: secrets)
        self.codes = OneTimeCodeService(
            store: SQLOneTimeCodeStore(database: database), outbox: outbox, rateLimiter: rateLimiter, guards: guards,
            secrets: secrets, clock: clock, rules: configuration.rules)
        let challenges = ChallengeThrottle(
            rateLimiter: rateLimiter, rule: .init(configuration.rules.challengesPerUser), clock: clock)
        self.deviceKeys = DeviceKeyService(
            store: SQLDeviceStore(database: database), guards: guards, passwords: passwords, audit: audit,
            clock: clock, rules: configuration.rules, challenges: challenges)
        self.passkeys = PasskeyService(
            store: SQLPasskeyStore(database: database), audit: audit, clock: clock, settings: configuration.webAuthn,
            ceremonies: ThreadPoolExecutor(pool: passwords.threadPool), challenges: challenges)
        self.secondFactors = SecondFactors(
            users: users, totp: totp, codes: codes, backupCodes: backupCodes, deviceKeys: deviceKeys,
            trustedDevices: trustedDevices, passkeys: passkeys)
        self.policy = SignInPolicy(
            secondFactors: secondFactors, sessions: sessions, clock: clock, window: configuration.rules.stepUpWindow)
        self.factorChanges = FactorChanges(
            sessions: sessions, deviceKeys: deviceKeys, passkeys: passkeys, outbox: outbox,
            configuration: configuration, clock: clock)
        self.housekeeping = Housekeeping(
            totp: SQLTOTPCredentialStore(database: database), loginFlows: SQLLoginFlowStore(database: database),
            sessions: SQLSessionStore(database: database), rateLimits: SQLRateLimitStore(database: database),
            guards: SQLFactorGuardStore(database: database), devices: SQLDeviceStore(database: database),
            passkeys: SQLPasskeyStore(database: database))
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

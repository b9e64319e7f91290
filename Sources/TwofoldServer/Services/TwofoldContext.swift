import Foundation
import NIOPosix
import Vapor

/// What every request handler needs besides the database: the clock, token signing, password
/// hashing and the settings. Built once in `configure` and stored on the application; a class,
/// so the many reads a request makes share it rather than copy it.
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
    let audit: Auditor
    let trustedDevices: TrustedDeviceService
    let rateLimiter: RateLimiter
    let sessions: SessionService
    let guards: FactorGuard
    let loginFlows: LoginFlowService
    let totp: TOTPService
    let backupCodes: BackupCodeService
    let outbox: Outbox
    let codes: OneTimeCodeService
    let housekeeping: Housekeeping
    let users: any UserStore
    let deviceKeys: DeviceKeyService

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
        self.deviceKeys = DeviceKeyService(
            store: SQLDeviceStore(database: database), guards: guards, passwords: passwords, audit: audit,
            clock: clock, rules: configuration.rules)
        self.housekeeping = Housekeeping(
            totp: SQLTOTPCredentialStore(database: database), loginFlows: SQLLoginFlowStore(database: database),
            sessions: SQLSessionStore(database: database), rateLimits: SQLRateLimitStore(database: database),
            guards: SQLFactorGuardStore(database: database), devices: SQLDeviceStore(database: database))
    }

    struct Key: StorageKey {
        typealias Value = TwofoldContext
    }
}

extension Application {
    /// Set once, by `configure(_:with:)`, before any request.
    ///
    /// Read ~20 times a sign-in: Vapor's `storage` takes a lock, copies the storage and casts the
    /// value on every read (~1.5 % of a sign-in's CPU in all), so each thread keeps the context it
    /// read last with its application (`TwofoldContext.lastRead`). Both are held weakly: a thread
    /// keeps neither alive, and an application gone is never mistaken for a new one.
    var twofold: TwofoldContext {
        get {
            let lastRead = TwofoldContext.lastRead.currentValue
            if let lastRead, lastRead.application === self, let context = lastRead.context { return context }
            guard let context = storage[TwofoldContext.Key.self] else {
                fatalError("configure(_:with:) sets up the Twofold context before any request")
            }
            TwofoldContext.lastRead.currentValue = TwofoldContext.LastRead(application: self, context: context)
            return context
        }
        set {
            // Set once: a thread that kept the first would not see a second.
            precondition(storage[TwofoldContext.Key.self] == nil, "the Twofold context is set once")
            storage[TwofoldContext.Key.self] = newValue
        }
    }
}

extension TwofoldContext {
    /// The context a thread read last, and whose it is. Only that thread reads or replaces it,
    /// which makes the `@unchecked Sendable` safe.
    final class LastRead: @unchecked Sendable {
        weak var application: Application?
        weak var context: TwofoldContext?

        init(application: Application, context: TwofoldContext) {
            self.application = application
            self.context = context
        }
    }

    static let lastRead = ThreadSpecificVariable<LastRead>()
}

extension Request {
    var twofold: TwofoldContext { application.twofold }

    /// The client's address: the socket peer, or, behind trusted proxies
    /// (`TWOFOLD_TRUST_PROXY=true`), the `X-Forwarded-For` entry the outermost of them appended.
    var clientAddress: String? {
        let configuration = twofold.configuration
        guard configuration.trustProxy else { return remoteAddress?.ipAddress }
        return Self.forwardedClient(
            headers[.xForwardedFor], trustedHops: configuration.trustedProxyHops) ?? remoteAddress?.ipAddress
    }

    /// The client in `X-Forwarded-For` values (every header, in order) when `trustedHops`
    /// proxies each append the address they received from: the entry `trustedHops` from the
    /// right. Entries left of it were written by the client (issue S item 4: taking the first
    /// let a client choose the address that throttles see). With fewer entries than hops, the
    /// left-most, which a trusted proxy still wrote.
    static func forwardedClient(_ values: [String], trustedHops: Int) -> String? {
        let entries = values.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        guard !entries.isEmpty else { return nil }
        let entry = entries[max(0, entries.count - trustedHops)]
        guard !entry.isEmpty, entry.count <= 64 else { return nil }
        return entry
    }

    /// Where the request came from, for the audit log and remembered devices.
    var origin: RequestOrigin { RequestOrigin(address: clientAddress, userAgent: userAgent) }

    /// The client's `User-Agent`, cut to the 256 characters sessions and audit events keep.
    var userAgent: String? {
        headers.first(name: .userAgent).map { String($0.prefix(256)) }
    }
}

import Crypto
import Fluent
import FluentPostgresDriver
import FluentSQLiteDriver
import Foundation
import Prometheus
import TwofoldSQLite
import Vapor

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sets up an application from a configuration: data folder and keys, database, middleware,
/// routes. The same function serves the binary and the in-process tests.
public func configure(
    _ app: Application, with configuration: Configuration, clock: @escaping @Sendable () -> Date = { Date() }
) async throws {
    if configuration.testClockFile != nil, configuration.mode == .production {
        throw ConfigurationError(
            variable: "TWOFOLD_TEST_CLOCK_FILE", message: "moves the server's clock for tests; never in production")
    }
    let clock = configuration.testClockFile.map { TestClockFile(path: $0).now } ?? clock
    let dataDirectory = DataDirectory(url: configuration.dataDirectory)
    try dataDirectory.prepare()
    let now = clock()
    // Retired keys stay while a token they signed may be unexpired (plus a minute of clock skew).
    let retired = try dataDirectory.retiredSigningKeys(
        since: now.addingTimeInterval(-configuration.accessTokenLifetime - 60))
    let tokens = try await TokenService(
        current: try dataDirectory.signingKey(), retired: retired, lifetime: configuration.accessTokenLifetime)
    let encryptionKey = try configuration.encryptionKey.map { SymmetricKey(data: $0) } ?? dataDirectory.encryptionKey()
    let secrets = SecretBox(key: encryptionKey)
    let sms: any MessageProvider =
        switch configuration.smsProvider {
        case .console: ConsoleProvider()
        case .disabled: DisabledProvider()
        case .webhook(let url, let secret):
            WebhookSMSProvider(url: URI(string: url), secret: secret, client: app.client)
        }
    let email: any MessageProvider =
        switch configuration.emailProvider {
        case .console: ConsoleProvider()
        case .disabled: DisabledProvider()
        case .smtp(let settings): try SMTPEmailProvider(settings: settings, group: app.eventLoopGroup)
        }
    // Password hashing gets threads of its own: on the application's pool (which SQLite also
    // uses) a burst of bcrypt checks would queue database work behind it.
    let hashingPool = NIOThreadPool(numberOfThreads: max(2, System.coreCount))
    hashingPool.start()
    app.lifecycle.use(ThreadPoolShutdown(pool: hashingPool))
    var sqlite: DirectSQLite?
    var postgres: PostgresStatements?
    func openSQLite(path: String) async throws {
        try DatabaseFilePermissions.restrict(path: path)
        let direct = try await DirectSQLite.open(path: path, logger: app.logger)
        app.lifecycle.use(direct)
        sqlite = direct
        // Fluent only migrates: every statement after that goes through the stores.
        app.databases.use(.sqlite(.file(path)), as: .sqlite)
        try await SQLiteTuning.apply(to: app)
    }
    switch configuration.database {
    case .sqlite(let path):
        try await openSQLite(path: path)
    case .sqliteInMemory:
        // A throwaway run: an SQLite file in a new temporary folder, removed at shutdown, so it
        // takes the same path through the server as a kept file.
        // mkdtemp: a new folder, the owner's alone (0700) from the moment it exists.
        var template = Array((FileManager.default.temporaryDirectory.path + "/twofold-XXXXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw DataDirectoryError.cannotWrite(FileManager.default.temporaryDirectory.path)
        }
        let folder = URL(fileURLWithPath: String(cString: made))
        app.lifecycle.use(FolderRemoval(folder: folder))
        try await openSQLite(path: folder.appendingPathComponent("twofold.sqlite").path)
    case .postgres(let url):
        // The migrations' pool waits for a connection at least as long as the requests do.
        let migrationsWait = max(configuration.postgresConnectTimeout, .seconds(10))
        app.databases.use(
            try .postgres(url: url, connectionPoolTimeout: TimeAmount(migrationsWait)), as: .psql)
        let client = try PostgresStatements.client(
            url: url, connections: configuration.postgresConnections,
            connectTimeout: configuration.postgresConnectTimeout, logger: app.logger)
        let watch = ConnectionWatch(
            limit: configuration.postgresConnectTimeout, interval: .milliseconds(250), on: app.eventLoopGroup.any())
        app.lifecycle.use(PostgresClientRunner(client: client, watch: watch))
        postgres = PostgresStatements(
            client: client, logger: app.logger,
            prepared: Dictionary(uniqueKeysWithValues: TwofoldContext.Stores.prepared.map { ($0.name, $0) }),
            watch: watch)
    }
    let database = DatabaseExecutor(
        direct: sqlite, postgres: postgres, databases: app.databases, group: app.eventLoopGroup, logger: app.logger)
    let apns = try configuration.apns.map { try APNsDelivery(settings: $0, group: app.eventLoopGroup) }
    app.twofold = TwofoldContext(
        configuration: configuration, clock: ServerClock(now: clock), tokens: tokens,
        passwords: try PasswordHasher(cost: configuration.bcryptCost, threadPool: hashingPool),
        secrets: secrets,
        delivery: DeliveryWorker(store: SQLOutboxStore(database: database), sms: sms, email: email, secrets: secrets),
        sqlite: sqlite, database: database, phoneDelivery: apns)
    // Registered after the databases, so it shuts down before them: work under way finishes first.
    app.lifecycle.use(BackgroundWorkShutdown(work: app.twofold.background))
    // Handlers stop in the reverse order: the phone queues first, then the client they share.
    if let apns { app.lifecycle.use(ShutdownStep { await apns.shutdown() }) }
    for work in app.twofold.phoneWork { app.lifecycle.use(BackgroundWorkShutdown(work: work)) }
    app.migrations.add(Migrations.all)

    app.http.server.configuration.hostname = configuration.host
    app.http.server.configuration.port = configuration.port
    // Requests are small JSON: no compressed bodies to inflate (a decompression bomb is one
    // less thing to defend against). Answers carry tokens and secrets: never compressed, so
    // their length cannot leak them beside attacker-chosen content (BREACH).
    app.http.server.configuration.requestDecompression = .disabled
    app.http.server.configuration.responseCompression = .forceDisabled
    // Vapor's own request metrics go to swift-metrics, which nothing here collects; Twofold's
    // are `MetricsMiddleware`'s, on `GET /metrics`.
    app.http.server.configuration.reportMetrics = false
    app.routes.defaultMaxBodySize = ByteCount(value: configuration.maxBodyBytes)

    let registry = PrometheusCollectorRegistry()
    app.middleware = Middlewares()
    app.middleware.use(MetricsMiddleware(registry: registry))
    app.middleware.use(RequestIDMiddleware())
    app.middleware.use(RequestLoggingMiddleware(level: .info))
    app.middleware.use(ProblemMiddleware(isProduction: configuration.mode == .production))
    if configuration.trustProxy {
        app.middleware.use(ForwardedClientMiddleware(trustedHops: configuration.trustedProxyHops))
    }

    // Each controller registers its handlers from the endpoints of `API` (paths from the root),
    // and is built with what it uses.
    let context = app.twofold
    let callers = Callers(users: context.users)
    let recoveryGate = RecoveryGate(callers: callers, secondFactors: context.secondFactors)
    let browser = BrowserSessions(
        sessions: context.sessions, callers: callers, recoveryGate: recoveryGate, secrets: context.secrets,
        cookies: context.cookies, origins: configuration.webAuthn.origins, lifetime: configuration.refreshTokenLifetime)
    let routes = EndpointRoutes(
        app.routes,
        bearer: BearerAuthentication(
            tokens: context.tokens, sessions: context.sessions, clock: context.clock, browser: browser),
        recoveryGate: recoveryGate,
        adminOnly: AdminOnly(policy: context.policy),
        idempotency: IdempotencyMiddleware(
            idempotency: context.idempotency, maxBodyBytes: context.configuration.maxBodyBytes))
    let controllers: [any EndpointCollection] = [
        OperationsController(
            registry: registry, openAPIDocument: try OpenAPIDocument.load(), database: context.database),
        JWKSController(tokens: context.tokens, clock: context.clock),
        AuthController(
            registration: context.registration, signIn: context.signIn, stepUps: context.stepUp,
            signOut: context.signOut, sessions: context.sessions, callers: callers, cookies: context.cookies),
        AccountController(changes: context.accountChanges, callers: callers),
        DeviceKeyController(enrolment: context.deviceEnrolment, signIn: context.deviceSignIn, callers: callers),
        DeviceSecondFactorController(factors: context.deviceFactors, callers: callers),
        AdminController(administration: context.administration, callers: callers),
        RecoveryController(recovery: context.recovery, callers: callers),
        PasswordResetController(
            reset: context.passwordReset, verification: context.emailVerification, callers: callers),
        TwoFactorController(settings: context.factorSettings, callers: callers),
        SecondStepController(
            secondStep: context.secondStep, trustedDeviceLifetime: context.rules.trustedDeviceLifetime,
            cookies: context.cookies),
        PushController(
            push: context.push, channel: context.phones, secondStep: context.secondStep, callers: callers,
            trustedDeviceLifetime: context.rules.trustedDeviceLifetime, cookies: context.cookies),
        PasskeyController(
            management: context.passkeyManagement, passwordless: context.passwordlessSignIn, callers: callers,
            origins: context.configuration.webAuthn.origins, appleApps: context.configuration.webAuthn.appleApps),
    ]
    for controller in controllers { controller.boot(routes: routes) }
    PagesController(
        browser: browser,
        signIn: context.signIn, registration: context.registration, secondStep: context.secondStep,
        push: context.push,
        factorSettings: context.factorSettings, accountChanges: context.accountChanges, signOut: context.signOut,
        sessions: context.sessions,
        stepUp: context.stepUp, recovery: context.recovery, passwordReset: context.passwordReset,
        emailVerification: context.emailVerification, administration: context.administration,
        callers: callers, passkeys: context.passkeys, passkeyManagement: context.passkeyManagement,
        passwordless: context.passwordlessSignIn, deviceKeys: context.deviceKeys,
        deviceEnrolment: context.deviceEnrolment, cookies: context.cookies,
        trustedDeviceLifetime: context.rules.trustedDeviceLifetime, codeResendAfter: context.rules.codeResendAfter,
        clock: context.clock,
        registrationEnabled: configuration.registrationEnabled
    ).boot(app.routes)

    if context.database.postgres != nil {
        // Several instances share the database: a phone's answer to another instance reaches the
        // waiters here within a second. Every instance runs it (it serves its own waiters),
        // background jobs or not.
        app.lifecycle.use(
            RepeatingJob(name: "push waiters", interval: .seconds(1)) { app in
                try await app.twofold.push.watchOtherInstances()
            })
    }
    if configuration.runsBackgroundJobs {
        app.lifecycle.use(
            RepeatingJob(name: "housekeeping", interval: .seconds(60)) { app in
                try await app.twofold.housekeeping.sweep(now: app.twofold.clock.now())
            })
        app.lifecycle.use(
            RepeatingJob(name: "delivery", interval: .seconds(1)) { app in
                try await app.twofold.delivery.runOnce(now: app.twofold.clock.now(), logger: app.logger)
            })
        app.lifecycle.use(
            RepeatingJob(name: "sign-in notices", interval: .seconds(2)) { app in
                try await app.twofold.phones.watchSignIns()
            })
    }
    app.asyncCommands.use(AdminCommand(), as: "admin")
    app.asyncCommands.use(KeysCommand(), as: "keys")
    app.asyncCommands.use(BenchSeedCommand(), as: "bench-seed")
}

/// The OpenAPI description shipped inside the server (`docs/openapi.yaml` is a link to it).
enum OpenAPIDocument {
    static func load() throws -> String {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else {
            throw Abort(.internalServerError, reason: "openapi.yaml is missing from the server's resources")
        }
        return try String(contentsOf: url, encoding: .utf8)
    }
}

/// Waits, at shutdown, for the work requests started and did not wait for (`BackgroundWork`).
struct BackgroundWorkShutdown: LifecycleHandler {
    let work: BackgroundWork

    func shutdownAsync(_ application: Application) async {
        await work.close()
    }
}

/// Something to stop at shutdown (a client the background work used).
struct ShutdownStep: LifecycleHandler {
    let run: @Sendable () async -> Void

    func shutdownAsync(_ application: Application) async {
        await run()
    }
}

/// Removes a throwaway database's folder when the application stops.
struct FolderRemoval: LifecycleHandler {
    let folder: URL

    func shutdownAsync(_ application: Application) async {
        do {
            try FileManager.default.removeItem(at: folder)
        } catch {
            application.logger.warning("The throwaway database's folder \(folder.path) was not removed: \(error)")
        }
    }
}

/// Stops a thread pool the application started, at shutdown.
struct ThreadPoolShutdown: LifecycleHandler {
    let pool: NIOThreadPool

    func shutdownAsync(_ application: Application) async {
        try? await pool.shutdownGracefully()
    }
}

import Fluent
import Foundation
import Logging
import Vapor

/// The `twofold-server` program: `serve` (the default; migrates first), `migrate`, and Vapor's
/// other commands (`routes`).
public enum ServerMain {
    public static func run(arguments: [String] = CommandLine.arguments) async -> Int32 {
        let configuration: Configuration
        do {
            configuration = try Configuration.load(from: ProcessInfo.processInfo.environment)
        } catch {
            FileHandle.standardError.write(Data("twofold-server: \(error)\n".utf8))
            return 78  // EX_CONFIG
        }
        bootstrapLogging(configuration)

        let environment = Environment(
            name: configuration.mode == .production ? "production" : "development", arguments: arguments)
        let app: Application
        do {
            app = try await Application.make(environment)
        } catch {
            FileHandle.standardError.write(Data("twofold-server: \(error)\n".utf8))
            return 1
        }
        var status: Int32 = 0
        do {
            try await configure(app, with: configuration)
            // Vapor runs `serve` when no command is named (flags alone, like `--port 9000`, are serve's).
            let named = arguments.dropFirst().first
            let command = named.map { $0.hasPrefix("-") ? "serve" : $0 } ?? "serve"
            if command == "serve" || command == "admin" || command == "bench-seed" {
                try await migrateQuietly(app)
            }
            if command == "serve" {
                if try await !app.twofold.users.hasAdministrator() {
                    app.logger.notice(
                        "No administrator yet. Create one: twofold-server admin create --username NAME --email ADDRESS")
                }
                // The address to open is the passkeys' origin (`localhost` by default): browsers
                // refuse passkeys at an IP address such as 127.0.0.1, where the server listens.
                app.logger.notice(
                    "Twofold is starting: open \(configuration.publicURL) in a browser",
                    metadata: [
                        "listening": "\(configuration.host):\(configuration.port)",
                        "dataDirectory": "\(configuration.dataDirectory.path)",
                        "database": "\(configuration.database.kind)",
                    ])
                if let file = configuration.testClockFile {
                    app.logger.warning(
                        "The clock is moved by a test: TWOFOLD_TEST_CLOCK_FILE is set (for tests only)",
                        metadata: ["file": "\(file)"])
                }
            }
            try await app.execute()
        } catch {
            app.logger.critical("twofold-server stopped: \(error)")
            status = 1
        }
        try? await app.asyncShutdown()
        return status
    }

    /// Runs the pending migrations with Fluent's step-by-step lines held back (a first start
    /// would print two lines for each of dozens of steps), then says in one line what changed.
    private static func migrateQuietly(_ app: Application) async throws {
        let level = app.logger.logLevel
        app.logger.logLevel = max(level, .notice)
        defer { app.logger.logLevel = level }
        try await app.migrator.setupIfNeeded().get()
        let pending = try await app.migrator.previewPrepareBatch().get().count
        try await app.autoMigrate()
        if pending > 0 {
            app.logger.logLevel = level
            app.logger.notice("The database is up to date: \(pending) migration\(pending == 1 ? "" : "s") applied")
        }
    }

    private static func bootstrapLogging(_ configuration: Configuration) {
        let level = configuration.logLevel
        switch configuration.logFormat {
        case .json:
            LoggingSystem.bootstrap { label in
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
        case .text:
            LoggingSystem.bootstrap { label in
                var handler = TextLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
        }
    }
}

extension Configuration.Database {
    /// The kind of database, never its URL (which may hold a password).
    var kind: String {
        switch self {
        case .sqlite: return "sqlite"
        case .sqliteInMemory: return "sqlite (a throwaway file)"
        case .postgres: return "postgresql"
        }
    }
}

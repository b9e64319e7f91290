import Foundation
import TwofoldCore
import Vapor

/// `twofold-server bench-seed --users N --output PREFIX`: fills a development database for
/// `scripts/bench` — N users with an authenticator app enabled, each with two login flows
/// waiting for their second step. Writes `PREFIX.ok` (one `tempToken,code` line per user, the
/// code right for the current time step) and `PREFIX.wrong` (the other flow and a wrong code).
/// Refused in production: it creates accounts with a known password.
struct BenchSeedCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Option(name: "users", help: "How many users to create (default 20000).")
        var users: Int?

        @Option(name: "output", help: "Path prefix for the .ok and .wrong flow files.")
        var output: String?
    }

    var help: String { "Seeds users and login flows for scripts/bench (development only)" }

    func run(using context: CommandContext, signature: Signature) async throws {
        let app = context.application
        guard app.twofold.configuration.mode != .production else {
            throw CommandError("bench-seed refuses to run with TWOFOLD_ENV=production")
        }
        let count = signature.users ?? 20_000
        guard (1...1_000_000).contains(count), let output = signature.output else {
            throw CommandError("use: bench-seed --users 1…1000000 --output PREFIX")
        }
        let secrets = app.twofold.secrets
        let passwordHash = try await app.twofold.passwords.hash("bench password \(UUID())")
        let run = UUID().uuidString.prefix(8).lowercased()
        let now = Date()
        var okLines: [String] = []
        var wrongLines: [String] = []
        var seeded: [(userID: UUID, secret: [UInt8], ok: String, wrong: String)] = []
        for start in stride(from: 0, to: count, by: 500) {
            var users: [User] = []
            var credentials: [TOTPCredentialRecord] = []
            var flows: [LoginFlowRecord] = []
            for index in start..<min(start + 500, count) {
                let userID = UUID()
                let user = User(
                    id: userID, username: "bench-\(run)-\(index)", email: "bench-\(run)-\(index)@bench.invalid",
                    phone: nil, role: .user, passwordHash: passwordHash, now: now)
                let secret = SecureRandom.bytes(20)
                let credential = TOTPCredentialRecord(
                    id: UUID(), userID: userID, status: .active,
                    secretCiphertext: try secrets.seal(secret, boundTo: userID), createdAt: now, expiresAt: now,
                    confirmedAt: now)
                let (ok, wrong) = (SecureToken.generate(), SecureToken.generate())
                for token in [ok, wrong] {
                    flows.append(
                        LoginFlowRecord(
                            id: UUID(), tokenHash: SecureToken.hash(token), userID: userID, firstFactor: "pwd",
                            createdAt: now, expiresAt: now.addingTimeInterval(app.twofold.rules.loginFlowLifetime)))
                }
                users.append(user)
                credentials.append(credential)
                seeded.append((userID, secret, ok, wrong))
            }
            let (batchUsers, batchCredentials, batchFlows) = (users, credentials, flows)
            try await app.twofold.users.insert(batchUsers)
            try await app.twofold.totp.store.insert(batchCredentials)
            try await app.twofold.loginFlows.store.insert(batchFlows)
        }
        // Codes for the time step at the end of seeding, so they stay valid as long as possible.
        let at = Date()
        for entry in seeded {
            let totp = try TOTP(secret: entry.secret)
            let code = try totp.code(at: at)
            let nearby = Set(try (-1...1).map { try totp.code(at: at.addingTimeInterval(Double($0) * 30)) })
            var wrong = code
            while nearby.contains(wrong) { wrong = String(format: "%06d", Int.random(in: 0..<1_000_000)) }
            okLines.append("\(entry.ok),\(code)")
            wrongLines.append("\(entry.wrong),\(wrong)")
        }
        try (okLines.joined(separator: "\n") + "\n").write(toFile: output + ".ok", atomically: true, encoding: .utf8)
        try (wrongLines.joined(separator: "\n") + "\n").write(
            toFile: output + ".wrong", atomically: true, encoding: .utf8)
        context.console.print("Seeded \(count) users with TOTP and 2 login flows each (valid 5 minutes).")
    }
}

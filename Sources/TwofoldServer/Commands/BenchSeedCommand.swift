import Crypto
import Foundation
import TwofoldCore
import Vapor
import WebAuthn

/// `twofold-server bench-seed --users N --output PREFIX`: fills a development database for
/// `scripts/bench` — N users with an authenticator app enabled, each with two login flows
/// waiting for their second step. Writes `PREFIX.ok` (one `tempToken,code` line per user, the
/// code right for the current time step) and `PREFIX.wrong` (the other flow and a wrong code).
/// With `--passkeys M`, also M users with an ES256 passkey, each with a login flow, its passkey
/// challenge and the assertion over it made here: `PREFIX.passkey` holds one request body of
/// `POST /api/v1/2fa/passkey/authenticate/verify` per line.
/// Refused in production: it creates accounts with a known password.
struct BenchSeedCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Option(name: "users", help: "How many users to create (default 20000).")
        var users: Int?

        @Option(name: "output", help: "Path prefix for the .ok and .wrong flow files.")
        var output: String?

        @Option(name: "passkeys", help: "How many users with a passkey to add (default 0).")
        var passkeys: Int?
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
        // Passkey users first: the codes below are for the time step at the very end.
        let passkeys = signature.passkeys ?? 0
        guard (0...1_000_000).contains(passkeys) else { throw CommandError("--passkeys must be 0…1000000") }
        if passkeys > 0 {
            try await seedPasskeys(
                passkeys, app: app, run: run, passwordHash: passwordHash, output: output + ".passkey")
            context.console.print("Seeded \(passkeys) users with a passkey, a login flow and a signed assertion each.")
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
        context.console.print(
            "Seeded \(count) users with TOTP and 2 login flows each "
                + "(valid \(app.twofold.rules.loginFlowLifetime.inWords)).")
    }

    /// Users with an ES256 passkey (counter 0), a login flow and its challenge each, and the
    /// request bodies that complete those flows (counter 1, UP and UV set).
    private func seedPasskeys(_ count: Int, app: Application, run: String, passwordHash: String, output: String)
        async throws
    {
        let settings = app.twofold.configuration.webAuthn
        let store = app.twofold.passkeys.store
        let origin = settings.origins.first ?? "http://localhost"
        let rpIDHash = Array(SHA256.hash(data: Array(settings.rpID.utf8)))
        let authenticatorData = rpIDHash + [0x05, 0, 0, 0, 1]
        let now = Date()
        var lines: [String] = []
        for start in stride(from: 0, to: count, by: 500) {
            var users: [User] = []
            var flows: [LoginFlowRecord] = []
            var passkeys: [PasskeyRecord] = []
            var challenges: [PasskeyChallengeRecord] = []
            for index in start..<min(start + 500, count) {
                let userID = UUID()
                users.append(
                    User(
                        id: userID, username: "bench-\(run)-passkey-\(index)",
                        email: "bench-\(run)-passkey-\(index)@bench.invalid", phone: nil, role: .user,
                        passwordHash: passwordHash, now: now))
                let key = P256.Signing.PrivateKey()
                let raw = Array(key.publicKey.rawRepresentation)
                let coseKey: [UInt8] =
                    [0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20] + raw.prefix(32) + [0x22, 0x58, 0x20]
                    + raw.suffix(32)
                let credentialID = Base64URL.encode(SecureRandom.bytes(32))
                passkeys.append(
                    PasskeyRecord(
                        id: UUID(), userID: userID, credentialID: credentialID, name: "Bench key",
                        publicKey: Base64URL.encode(coseKey), algorithm: -7, signCount: 0,
                        aaguid: "00000000-0000-0000-0000-000000000000", backupEligible: false, backedUp: false,
                        transports: [], attestationFormat: "none", attestationTrust: "none", createdAt: now,
                        lastUsedAt: nil))
                let token = SecureToken.generate()
                let flowID = UUID()
                flows.append(
                    LoginFlowRecord(
                        id: flowID, tokenHash: SecureToken.hash(token), userID: userID, firstFactor: "pwd",
                        createdAt: now, expiresAt: now.addingTimeInterval(app.twofold.rules.loginFlowLifetime)))
                let challenge = Base64URL.encode(SecureRandom.bytes(32))
                challenges.append(
                    PasskeyChallengeRecord(
                        id: UUID(), challenge: challenge, purpose: .loginFlow, userID: userID, flowID: flowID,
                        createdAt: now, expiresAt: now.addingTimeInterval(settings.challengeLifetime), usedAt: nil))
                let clientData = Array(
                    #"{"type":"webauthn.get","challenge":"\#(challenge)","origin":"\#(origin)"}"#.utf8)
                let signature = try key.signature(for: authenticatorData + Array(SHA256.hash(data: clientData)))
                lines.append(
                    #"{"tempToken":"\#(token)","credential":{"id":"\#(credentialID)","rawId":"\#(credentialID)","#
                        + #""type":"public-key","response":{"clientDataJSON":"\#(Base64URL.encode(clientData))","#
                        + #""authenticatorData":"\#(Base64URL.encode(authenticatorData))","#
                        + #""signature":"\#(Base64URL.encode(signature.derRepresentation))"}}}"#)
            }
            try await app.twofold.users.insert(users)
            try await app.twofold.loginFlows.store.insert(flows)
            for passkey in passkeys { _ = try await store.insert(passkey, addedBy: nil) }
            for challenge in challenges { try await store.insertChallenge(challenge) }
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: output, atomically: true, encoding: .utf8)
    }
}

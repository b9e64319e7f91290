import Foundation
import TwofoldAPI
import TwofoldCore
import Vapor

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `twofold-server admin create --username … --email …`: creates an administrator with an
/// authenticator app (issue V item 5: administrators sign in with a second factor, and the
/// console and every admin endpoint refuse one whose session did not prove it). The password is
/// read from standard input when it is not a terminal; otherwise one is generated. The password
/// (when generated), the app's key with its QR code, and ten backup codes are printed once, to
/// standard output: run it where that is the operator's terminal, not a collected log.
struct AdminCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Argument(name: "action", help: "create")
        var action: String

        @Option(name: "username", help: "The administrator's username.")
        var username: String?

        @Option(name: "email", help: "The administrator's email address.")
        var email: String?
    }

    var help: String { "Creates an administrator: admin create --username NAME --email ADDRESS" }

    func run(using context: CommandContext, signature: Signature) async throws {
        guard signature.action == "create" else {
            throw CommandError("unknown action \(signature.action.debugDescription); use `admin create`")
        }
        guard let username = signature.username.flatMap(InputValidation.username) else {
            throw CommandError("--username must be 3 to 32 letters, digits, '.', '_' or '-'")
        }
        guard let email = signature.email.flatMap(InputValidation.email) else {
            throw CommandError("--email must be an email address")
        }
        var password: String
        var generated = false
        if isatty(STDIN_FILENO) == 0, let line = readLine(strippingNewline: true), !line.isEmpty {
            password = line
        } else {
            password = SecureToken.generate()
            generated = true
        }
        if let problem = InputValidation.passwordProblem(password, username: username, email: email) {
            throw CommandError("the password \(problem)")
        }
        let app = context.application
        let hash = try await app.twofold.passwords.hash(password)
        let user = User(
            username: username, email: email, phone: nil, role: .admin, passwordHash: hash,
            now: app.twofold.clock.now())
        guard try await app.twofold.users.insert(user) else {
            throw CommandError("a user with that username or email address already exists")
        }
        try await app.twofold.audit.record(
            .adminCreated, user: user.id, detail: "created from the command line",
            origin: RequestOrigin(address: nil, userAgent: "twofold-server admin create"))
        let totp = try await app.twofold.totp.enableForNewAccount(userID: user.id, account: email)
        let backupCodes = try await app.twofold.backupCodes.regenerate(for: user.id, addedBy: nil)
        try await app.twofold.audit.record(
            .factorAdded, user: user.id, detail: FactorMethod.totp.rawValue,
            origin: RequestOrigin(address: nil, userAgent: "twofold-server admin create"))
        // Printed once, to standard output (where the operator ran the command), never to the
        // server's log or the audit trail.
        context.console.print("Created administrator \(username) <\(email)>.")
        if generated {
            context.console.print("Password (shown once, store it now): \(password)")
        }
        context.console.print(
            "Administrators sign in with an authenticator app as well. Add this account to yours now: scan the code "
                + "below, or type the key.")
        if let qr = try? QRCode(text: totp.otpauthUri, errorCorrection: .medium) {
            context.console.print(qr.terminalString())
        }
        context.console.print("Key: \(totp.secret)")
        context.console.print("Link: \(totp.otpauthUri)")
        context.console.print(
            "Backup codes (each signs in once if the app is lost; store them now): "
                + backupCodes.joined(separator: " "))
        password = ""
    }
}

/// A command-line mistake, printed as is.
struct CommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

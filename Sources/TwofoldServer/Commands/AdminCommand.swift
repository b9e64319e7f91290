import Foundation
import Vapor

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `twofold-server admin create --username … --email …`: creates an administrator. The password
/// is read from standard input when it is not a terminal; otherwise one is generated and printed
/// once.
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
        context.console.print("Created administrator \(username) <\(email)>.")
        if generated {
            // Printed once, to the terminal only; it is not logged.
            context.console.print("Password (shown once, store it now): \(password)")
        }
        password = ""
    }
}

/// A command-line mistake, printed as is.
struct CommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

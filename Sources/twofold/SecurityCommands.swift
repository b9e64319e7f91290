import ArgumentParser
import Foundation
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice

/// Asks the person at the terminal for a proof when the server wants a step-up: the password
/// (never echoed), or a code from the authenticator app or a backup code.
struct TerminalStepUp: StepUpProviding {
    func stepUpProof(need: String?, methods: [FactorMethod]) async throws -> StepUpRequest {
        let offered = [FactorMethod.password] + methods.filter { $0 == .totp || $0 == .backup }
        let names = offered.map(\.rawValue).joined(separator: ", ")
        guard isatty(0) == 1 else {
            throw CommandFailure(
                description: "Step up required (\(need ?? "step-up")): the server asks you to confirm it is you, "
                    + "and there is no terminal to ask on. Run the command in a terminal.")
        }
        FileHandle.standardError.write(Data("The server asks you to confirm it is you (\(need ?? "step-up")).\n".utf8))
        guard let typed = Terminal.ask("Confirm with (\(names)): "),
            let method = offered.first(where: { $0.rawValue == typed })
        else { throw CommandFailure(description: "No confirmation given: choose one of \(names).") }
        if method == .password {
            return StepUpRequest(method: .password, password: try Terminal.password(fromStandardInput: false))
        }
        guard let code = Terminal.ask("\(method == .totp ? "Authenticator" : "Backup") code: "), !code.isEmpty else {
            throw CommandFailure(description: "No code given.")
        }
        return StepUpRequest(method: method, code: code)
    }
}

extension ServerOptions {
    /// The signed-in account's factors, with step-ups asked for at the terminal and passkeys made
    /// by the virtual phone kept in the state folder.
    func security(passkeys: VirtualPasskeys? = nil) async throws -> AccountSecurity {
        let session = try session()
        guard case .signedIn = await session.restore() else {
            throw CommandFailure(description: "Not signed in: twofold login first.")
        }
        return AccountSecurity(session: session, stepUp: TerminalStepUp(), passkeys: passkeys)
    }

    /// The virtual phone kept in the state folder, with its passkeys for this server's origin.
    var phone: PhoneFolder { get throws { PhoneFolder(folder: try home) } }

    /// The origin the virtual passkey authenticator answers for: the server's (the server must
    /// list it in `TWOFOLD_WEBAUTHN_ORIGINS`).
    var origin: String { get throws { try client.origin } }
}

/// Runs `body`, turning a refusal of the server into the words of its problem.
func inWords<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as APIError {
        throw CommandFailure(description: Terminal.words(error))
    } catch let error as PasskeyCancelled {
        throw CommandFailure(description: "Cancelled: \(error).")
    }
}

/// `twofold totp enable`: an authenticator app as a second factor.
struct TOTPEnableCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enable",
        abstract: "Turn on authenticator-app codes for the signed-in account.",
        discussion: """
            Shows the otpauth:// URI and its QR code, then reads a code from the app at a prompt;
            or give it with --code on a second run (the secret waits on the server meanwhile).
            """)

    @OptionGroup var options: ServerOptions
    @Option(help: "A code from the authenticator app, to confirm a setup started before.") var code: String?

    func run() async throws {
        let security = try await options.security()
        var code = code
        if code == nil {
            let setup = try await inWords { try await security.startAuthenticator() }
            print("Add this account to your authenticator app: scan the QR code or type the secret.")
            print(try QRCode(text: setup.otpauthURI, errorCorrection: .medium).terminalString(darkOnLight: false))
            print("Secret: \(setup.secret)")
            print("URI: \(setup.otpauthURI)")
            code = Terminal.ask("Code from the app: ")
            guard code != nil else {
                print("Finish with: twofold totp enable --code CODE (before \(setup.expiresAt.formatted()))")
                return
            }
        }
        let confirmed = code ?? ""
        let backupCodes = try await inWords { try await security.confirmAuthenticator(code: confirmed) }
        print("Authenticator-app codes are on.")
        if let backupCodes { BackupCodesPrinter.show(backupCodes) }
    }
}

/// Backup codes, shown once.
enum BackupCodesPrinter {
    static func show(_ codes: [String]) {
        print("Your backup codes, shown only now: keep them where you keep passwords.")
        for code in codes { print("  \(code)") }
    }
}

/// `twofold passkey`: the signed-in account's passkeys, made by the virtual phone.
struct PasskeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passkey",
        abstract: "Add, list, rename and remove passkeys (the virtual phone's, in the state folder).",
        subcommands: [Add.self, List.self, Rename.self, Remove.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a passkey on the virtual phone and add it.")
        @OptionGroup var options: ServerOptions
        @Option(help: "A name for it (the server names it from its provider otherwise).") var name: String?

        func run() async throws {
            let folder = try options.phone
            let (deviceID, phone, authenticator) = try await folder.open(origin: try options.origin)
            let passkeys = VirtualPasskeys(authenticator)
            let security = try await options.security(passkeys: passkeys)
            let added = try await inWords { try await security.addPasskey(name: name) }
            try await folder.keep(deviceID: deviceID, phone: phone, passkeys: await passkeys.authenticator)
            print("Added the passkey \(added.credential.name) (id \(added.credential.id)).")
            if let backupCodes = added.backupCodes { BackupCodesPrinter.show(backupCodes) }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the account's passkeys.")
        @OptionGroup var options: ServerOptions

        func run() async throws {
            let security = try await options.security()
            let passkeys = try await inWords { try await security.passkeys() }
            if passkeys.isEmpty { print("No passkeys.") }
            for passkey in passkeys {
                let kind = passkey.synced ? "Synced" : passkey.deviceBound ? "This device only" : "Not synced"
                let used = passkey.lastUsedAt.map { "last used \($0.formatted())" } ?? "never used"
                print("\(passkey.id)  \(passkey.name)  (\(passkey.provider ?? "unknown provider"), \(kind), \(used))")
            }
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a passkey (its id from `passkey list`).")
        @OptionGroup var options: ServerOptions
        @Argument(help: "The passkey's id.") var id: String
        @Argument(help: "The new name.") var name: String

        func run() async throws {
            let security = try await options.security()
            let renamed = try await inWords { try await security.renamePasskey(id, to: name) }
            print("Renamed to \(renamed.name).")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a passkey (its id from `passkey list`).")
        @OptionGroup var options: ServerOptions
        @Argument(help: "The passkey's id.") var id: String

        func run() async throws {
            let folder = try options.phone
            let (deviceID, phone, authenticator) = try await folder.open(origin: try options.origin)
            let passkeys = VirtualPasskeys(authenticator)
            let security = try await options.security()
            try await inWords { try await security.removePasskey(id) }
            // The virtual phone forgets it too, as deleting it from a phone's passwords does.
            await passkeys.remove(credentialID: id)
            try await folder.keep(deviceID: deviceID, phone: phone, passkeys: await passkeys.authenticator)
            print("Removed.")
        }
    }
}

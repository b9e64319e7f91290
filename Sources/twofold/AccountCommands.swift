import ArgumentParser
import Foundation
import TwofoldAPI
import TwofoldClient
import TwofoldDevice

/// Which server, and where this tool keeps its state: `--server` (or `TWOFOLD_SERVER`), and
/// `$TWOFOLD_HOME` (or `~/.twofold`), a folder only its owner may open.
struct ServerOptions: ParsableArguments {
    @Option(help: "The server's URL (or TWOFOLD_SERVER; default http://localhost:8080, where passkeys work).")
    var server: String?

    var url: URL {
        get throws {
            let text = server ?? ProcessInfo.processInfo.environment["TWOFOLD_SERVER"] ?? "http://localhost:8080"
            guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw ValidationError("--server must be an http:// or https:// URL, not \(text)")
            }
            return url
        }
    }

    /// Named `twofold-cli` to the server, which shows its sessions as "twofold CLI".
    var client: APIClient { get throws { APIClient(baseURL: try url, headers: ["User-Agent": "twofold-cli/1"]) } }

    /// The state folder, made owner-only (0700) when this tool makes it.
    var home: URL {
        get throws {
            let environment = ProcessInfo.processInfo.environment
            let folder =
                environment["TWOFOLD_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".twofold")
            if !FileManager.default.fileExists(atPath: folder.path) {
                try FileManager.default.createDirectory(
                    at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            return folder
        }
    }

    func session() throws -> SessionManager {
        SessionManager(client: try client, store: FileTokenStore(file: try home.appendingPathComponent("session.json")))
    }

    /// The tokens of "remember this device" (`login --trust-device`), per account: owner-only.
    var rememberedDevices: FileRememberedDevices {
        get throws { FileRememberedDevices(file: try home.appendingPathComponent("remembered-devices.json")) }
    }

    /// Where `login` keeps a second step waiting for `login --code`.
    var pendingFile: URL { get throws { try home.appendingPathComponent("pending-sign-in.json") } }
}

/// A failure as a person reads it: the server's words, and when to try again.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
}

enum Terminal {
    /// The password: one line from standard input with `--password-stdin`, else a prompt that
    /// does not echo. Never an argument, never printed.
    static func password(fromStandardInput: Bool) throws -> String {
        if fromStandardInput {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                throw ValidationError("--password-stdin: no password on standard input")
            }
            return line
        }
        guard isatty(0) == 1, let typed = getpass("Password: ") else {
            throw ValidationError("no terminal to ask for the password on: use --password-stdin")
        }
        return String(cString: typed)
    }

    /// A line typed at a prompt, when there is a terminal to type it on.
    static func ask(_ prompt: String) -> String? {
        guard isatty(0) == 1 else { return nil }
        FileHandle.standardError.write(Data(prompt.utf8))
        return readLine(strippingNewline: true)
    }

    static func words(_ problem: SignInProblem) -> String { problem.message }

    /// An `APIError` in words: the problem's detail, and when to try again. No answer at all
    /// names the address tried.
    static func words(_ error: any Error) -> String {
        // A transport error, as `URLError` or as the `NSError` Foundation on Linux hands over.
        let transport = error as NSError
        if transport.domain == NSURLErrorDomain {
            let code = URLError.Code(rawValue: transport.code) ?? .unknown
            let reason = transport.userInfo[NSLocalizedDescriptionKey] as? String ?? "code \(transport.code)"
            let failing =
                transport.userInfo[NSURLErrorFailingURLErrorKey] as? URL
                ?? (transport.userInfo[NSURLErrorFailingURLStringErrorKey] as? String).flatMap(URL.init(string:))
            let tried = failing.map {
                " at \($0.scheme ?? "http")://\($0.host ?? "")\($0.port.map { ":\($0)" } ?? "")"
            }
            let nothingAnswered: Set<URLError.Code> = [
                .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .timedOut, .notConnectedToInternet,
                .networkConnectionLost,
            ]
            guard nothingAnswered.contains(code) else {
                return
                    "The connection\(tried.map { " to\($0.dropFirst(3))" } ?? "") failed: \(reason)"
            }
            return "Nothing answered\(tried ?? ""): is the server running there? Choose the server with --server or "
                + "TWOFOLD_SERVER."
        }
        guard let error = error as? APIError else { return "\(error)" }
        let detail = error.problem.map { $0.detail ?? $0.title } ?? "The server answered \(error.status)."
        if let seconds = error.retryAfter { return "\(detail) Try again in \(seconds) seconds." }
        return detail
    }
}

/// `twofold register`: opens an account.
struct RegisterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "register", abstract: "Open an account.")

    @OptionGroup var options: ServerOptions
    @Option(help: "The username (3 to 32 letters, digits, '.', '_' or '-').") var username: String
    @Option(help: "The email address.") var email: String
    @Option(help: "A phone number in E.164 form, like +14155550123.") var phone: String?
    @Flag(help: "Read the password from standard input (one line).") var passwordStdin = false

    func run() async throws {
        let password = try Terminal.password(fromStandardInput: passwordStdin)
        do {
            let registered = try await options.client.send(
                API.Auth.register,
                RegisterRequest(username: username, email: email, password: password, phoneNumber: phone))
            print("Registered \(registered.user.username) (\(registered.user.email)).")
            print("Sign in with: twofold login --username \(registered.user.username)")
        } catch let error as APIError {
            let fields = (error.problem?.errors ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            throw CommandFailure(
                description: ([Terminal.words(error)] + fields).joined(separator: "\n"))
        } catch let error as CommandFailure {
            throw error
        } catch {
            throw CommandFailure(description: Terminal.words(error))
        }
    }
}

/// `twofold login`: the password, then the second factor the server asks for.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in.",
        discussion: """
            A code the server asks for is read at a prompt, or given with --code on a second run
            (`twofold login --code C`), the waiting sign-in kept in the state folder. Exits with 0
            when signed in, 3 when the sign-in waits for a code, 1 when it failed.
            """)

    /// The exit status while a sign-in waits for its second factor (a script then runs
    /// `twofold login --code C`).
    static let waitingForCode: Int32 = 3

    @OptionGroup var options: ServerOptions
    @Option(help: "The account's email address.") var email: String?
    @Option(help: "The account's username.") var username: String?
    @Flag(help: "Read the password from standard input (one line).") var passwordStdin = false
    @Option(help: "The second factor: totp, sms, email or backup.") var method: String?
    @Option(help: "The code for the second factor.") var code: String?
    @Flag(help: "Remember this device: no second factor here for a while.") var trustDevice = false

    func validate() throws {
        if email != nil && username != nil { throw ValidationError("give --email or --username, not both") }
        if email == nil && username == nil && code == nil {
            throw ValidationError("give --email or --username (or --code to finish a waiting sign-in)")
        }
    }

    func run() async throws {
        let session = try options.session()
        // The session kept now, if any: a new sign-in ends it on its server.
        await session.restore()
        // The virtual phone's key for this account, when it has one: a second factor to offer.
        let folder = try options.phone
        let (deviceID, phone, passkeys) = try await folder.open(origin: try options.origin)
        let deviceKeys = DeviceKeyFlows(session: session, device: phone, deviceID: deviceID)
        var signer: (any DeviceKeySigning)?
        if let username, await phone.hasKey(tag: deviceKeys.tag(for: username)) {
            signer = deviceKeys.signer(username: username)
        }
        let flow = SignInFlow(
            client: try options.client, session: session, deviceKey: signer,
            rememberedDevices: try options.rememberedDevices)
        let pendingFile = try options.pendingFile
        var state: SignInState
        if let name = email ?? username {
            try? FileManager.default.removeItem(at: pendingFile)
            state = await flow.signIn(name, password: try Terminal.password(fromStandardInput: passwordStdin))
        } else {
            guard let data = FileManager.default.contents(atPath: pendingFile.path),
                let pending = try? Wire.decoder().decode(PendingSignIn.self, from: data)
            else { throw CommandFailure(description: "No sign-in is waiting for a code: sign in with your password.") }
            guard pending.server == (try options.client).origin else {
                throw CommandFailure(
                    description: "The sign-in waiting for a code is for \(pending.server ?? "another server"): "
                        + "sign in with your password here.")
            }
            state = await flow.resume(pending)
        }
        if case .secondFactor(let step) = state, let method {
            let chosen = FactorMethod(rawValue: method)
            guard step.methods.contains(chosen) else {
                throw CommandFailure(
                    description: "This account offers \(step.methods.map(\.rawValue).joined(separator: ", ")).")
            }
            state = await flow.choose(chosen)
        }
        if case .secondFactor(let step) = state, step.method == .deviceKey {
            state = await flow.useDeviceKey(rememberDevice: trustDevice)
            try await folder.keep(deviceID: deviceID, phone: phone, passkeys: passkeys)
        }
        if case .secondFactor(let step) = state, step.method != .deviceKey {
            if let code = code ?? (passwordStdin ? nil : Terminal.ask(Self.prompt(step))) {
                state = await flow.submit(code: code, rememberDevice: trustDevice)
            }
        }
        switch state {
        case .signedIn(let user):
            try? FileManager.default.removeItem(at: pendingFile)
            print("Signed in as \(user.username).")
        case .secondFactor(let step):
            if let pending = await flow.pending {
                try Self.keep(pending, at: pendingFile)
            }
            if let problem = step.problem { throw CommandFailure(description: Terminal.words(problem)) }
            print(Self.prompt(step))
            print("Finish with: twofold login --code CODE\(method.map { " --method \($0)" } ?? "")")
            // Not signed in yet: a script must not read this as success.
            throw ExitCode(Self.waitingForCode)
        case .credentials(let problem):
            try? FileManager.default.removeItem(at: pendingFile)
            if problem == .offline {
                throw CommandFailure(
                    description: "Nothing answered at \(try options.url.absoluteString), or it answered with a server "
                        + "error: is the server running there? Choose the server with --server or TWOFOLD_SERVER.")
            }
            throw CommandFailure(description: problem.map(Terminal.words) ?? "Not signed in.")
        case .recovery:
            throw CommandFailure(description: "No second factor this tool can use is left: recover the account.")
        case .working:
            throw CommandFailure(description: "The sign-in did not finish.")
        }
    }

    static func prompt(_ step: SecondFactorStep) -> String {
        let destination = step.codeSentTo.map { " sent to \($0)" } ?? ""
        let other = step.methods.filter { $0 != step.method }.map(\.rawValue)
        let alternatives = other.isEmpty ? "" : " (or --method \(other.joined(separator: "|")))"
        return "A \(step.method.rawValue) code\(destination) is needed\(alternatives): "
    }

    /// Writes the waiting sign-in, owner-only: it names a live login flow.
    static func keep(_ pending: PendingSignIn, at file: URL) throws {
        try? FileManager.default.removeItem(at: file)
        guard
            FileManager.default.createFile(
                atPath: file.path, contents: try Wire.encoder().encode(pending),
                attributes: [.posixPermissions: 0o600])
        else { throw CommandFailure(description: "cannot write \(file.path)") }
    }
}

/// `twofold status`: who is signed in here, decided from the stored session.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show who is signed in.")

    @OptionGroup var options: ServerOptions
    @Flag(help: "Print JSON: {signedIn, username, userId, expiresAt, methods}.") var json = false

    struct Status: Encodable {
        let signedIn: Bool
        let username: String?
        let userId: UUID?
        /// When the session ends unless it is used (its refresh token's expiry).
        let expiresAt: Date?
        /// The account's second factors, when the server could be asked.
        let methods: [FactorMethod]?
    }

    func run() async throws {
        let session = try options.session()
        var status = Status(signedIn: false, username: nil, userId: nil, expiresAt: nil, methods: nil)
        // Why the factors are not known, when they are not: nothing answered, or what the server said.
        var unknown = "unknown"
        if case .signedIn(let user) = await session.restore(), let stored = await session.session {
            var methods: [FactorMethod]?
            do {
                methods = try await options.client.send(
                    API.TwoFactor.mfaStatus, bearer: try await session.accessToken()
                ).methods
            } catch {
                unknown = "unknown: \(Terminal.words(error))"
            }
            status = Status(
                signedIn: true, username: user.username, userId: user.id, expiresAt: stored.refreshToken.expiresAt,
                methods: methods)
        }
        if json {
            let encoder = Wire.encoder()
            print(String(decoding: try encoder.encode(status), as: UTF8.self))
        } else if let username = status.username {
            let methods = status.methods.map {
                $0.isEmpty ? "password only" : $0.map(\.rawValue).joined(separator: ", ")
            }
            print("Signed in as \(username) (second factors: \(methods ?? unknown)).")
        } else {
            print("Not signed in.")
        }
    }
}

/// `twofold logout`: ends the session here and on the server.
struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "logout", abstract: "Sign out.")

    @OptionGroup var options: ServerOptions

    func run() async throws {
        let session = try options.session()
        await session.restore()
        if let other = await session.otherServersSession {
            throw CommandFailure(
                description: "Not signed in at \((try options.client).origin): the session kept is for "
                    + "\(other.server ?? "a server an earlier version did not record"); log out there.")
        }
        await session.signOut()
        try? FileManager.default.removeItem(at: try options.pendingFile)
        print("Signed out.")
    }
}

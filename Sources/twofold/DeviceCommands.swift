import ArgumentParser
import Foundation
import TwofoldAPI
import TwofoldClient
import TwofoldDevice

/// `twofold device`: seed 004's device-bound sign-in with the virtual phone kept in the state
/// folder (its device ID, switches and keys): enrolment along flows A, B and C, sign-in by
/// signing the server's challenge, and the method changes of scenarios 8 to 10.
struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Enrol the virtual phone, sign in with it, change or remove its method.",
        subcommands: [
            Enroll.self, SignIn.self, Approve.self, Deny.self, Upgrade.self, Downgrade.self, Unenroll.self,
        ])

    /// The phone's key kind, from flags.
    struct Protection: ParsableArguments {
        @Flag(help: "A device key behind biometrics (Face ID or Touch ID).") var biometrics = false
        @Flag(help: "A device key behind the device passcode only.") var passcodeOnly = false

        var chosen: KeyProtection? {
            get throws {
                if biometrics && passcodeOnly {
                    throw ValidationError("give --biometrics or --passcode-only, not both")
                }
                return biometrics ? .biometric : passcodeOnly ? .passcode : nil
            }
        }
    }

    /// The phone from the state folder, its flows on the session kept there, and how to keep
    /// the phone's keys once a command changed them.
    struct Phone {
        let flows: DeviceKeyFlows
        let session: SessionManager
        private let folder: PhoneFolder
        private let deviceID: String
        private let phone: VirtualPhone
        private let passkeys: VirtualAuthenticator

        init(_ options: ServerOptions) async throws {
            folder = try options.phone
            (deviceID, phone, passkeys) = try await folder.open(origin: try options.origin)
            session = try options.session()
            flows = DeviceKeyFlows(session: session, device: phone, deviceID: deviceID, stepUp: TerminalStepUp())
        }

        /// The signed-in account's username.
        func username() async throws -> String {
            guard case .signedIn(let user) = await session.restore() else {
                throw CommandFailure(description: "Not signed in: twofold login first.")
            }
            return user.username
        }

        func keep() async throws { try await folder.keep(deviceID: deviceID, phone: phone, passkeys: passkeys) }

        /// The accounts this phone holds a device key for on `origin`'s server (by the keys' tags).
        func keyAccounts(origin: String) async -> [String] {
            let prefix = DeviceKeyFlows.tag(origin: origin, username: "", deviceID: deviceID)
                .replacingOccurrences(of: ".." + deviceID, with: ".")
            let suffix = "." + deviceID
            return await phone.savedKeys().keys.compactMap { tag in
                guard tag.hasPrefix(prefix), tag.hasSuffix(suffix), tag.count > prefix.count + suffix.count else {
                    return nil
                }
                return String(tag.dropFirst(prefix.count).dropLast(suffix.count))
            }.sorted()
        }
    }

    static func words(_ enrolment: DeviceEnrolment) throws -> String {
        switch enrolment {
        case .enrolled(.biometric): return "This device signs in with a key behind biometrics."
        case .enrolled(.passcode): return "This device signs in with a key behind the passcode."
        case .enrolledForSMS: return "This device signs in with SMS codes."
        case .offerPasscode(let reason):
            throw CommandFailure(description: "\(reason.message): try again with --passcode-only.")
        case .blocked(let words): throw CommandFailure(description: "\(words), or enrol with --sms.")
        case .failed(let reason): throw CommandFailure(description: reason.message)
        }
    }

    struct Enroll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enrol this device for the signed-in account: a key (biometrics or passcode), or SMS codes.")
        @OptionGroup var options: ServerOptions
        @OptionGroup var protection: Protection
        @Flag(help: "SMS codes instead of a device key (for a device with no passcode).") var sms = false

        func run() async throws {
            let phone = try await Phone(options)
            let username = try await phone.username()
            let chosen = try protection.chosen
            if sms && chosen != nil { throw ValidationError("--sms takes no key kind") }
            let enrolment = try await inWords {
                sms
                    ? try await phone.flows.enrollForSMS(username: username)
                    : try await phone.flows.enroll(username: username, protection: chosen)
            }
            try await phone.keep()
            print(try DeviceCommand.words(enrolment))
        }
    }

    struct SignIn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign-in",
            abstract: "Sign in by the device's key, or by an SMS code when the key cannot sign.")
        @OptionGroup var options: ServerOptions
        @Option(help: "The account's username (default: the account this device holds a key for).")
        var username: String?
        @Option(help: "The SMS code, on a second run after one was sent.") var code: String?

        func run() async throws {
            let phone = try await Phone(options)
            let username: String
            if let given = self.username {
                username = given
            } else {
                let accounts = await phone.keyAccounts(origin: try options.origin)
                guard accounts.count == 1, let only = accounts.first else {
                    throw CommandFailure(
                        description: accounts.isEmpty
                            ? "This device holds no device key for this server: enrol it (twofold device enroll), or "
                                + "give --username for SMS sign-in."
                            : "This device holds keys for \(accounts.joined(separator: ", ")): give --username.")
                }
                username = only
            }
            let result: DeviceKeyFlows.SignIn
            if let code {
                result = try await inWords { try await phone.flows.signIn(username: username, smsCode: code) }
            } else {
                result = try await inWords { try await phone.flows.signIn(username: username) }
            }
            try await phone.keep()
            switch result {
            case .signedIn(let user):
                print("Signed in as \(user.username).")
            case .useSMS, .smsCode:
                let sent = try await inWords { try await phone.flows.requestSMSCode(username: username) }
                if case .useSMS(let reason) = result {
                    print("\(reason.message). \(sent.message)")
                } else {
                    print(sent.message)
                }
                print("Finish with: twofold device sign-in --username \(username) --code CODE")
            case .refused(_, let words):
                throw CommandFailure(description: words)
            }
        }
    }

    struct Upgrade: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace the device's key or SMS enrolment with a new key (scenarios 9 and 10).")
        @OptionGroup var options: ServerOptions
        @OptionGroup var protection: Protection

        func run() async throws {
            let phone = try await Phone(options)
            let username = try await phone.username()
            let enrolment = try await inWords {
                try await phone.flows.upgrade(username: username, protection: try protection.chosen ?? .biometric)
            }
            try await phone.keep()
            print(try DeviceCommand.words(enrolment))
        }
    }

    struct Downgrade: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The device's security is gone: drop its key and use SMS codes (scenario 8).")
        @OptionGroup var options: ServerOptions

        func run() async throws {
            let phone = try await Phone(options)
            let username = try await phone.username()
            try await inWords { try await phone.flows.downgrade(username: username) }
            try await phone.keep()
            print("This device signs in with SMS codes now.")
        }
    }

    struct Unenroll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove this device and its key.")
        @OptionGroup var options: ServerOptions

        func run() async throws {
            let phone = try await Phone(options)
            let username = try await phone.username()
            try await inWords { try await phone.flows.unenroll(username: username) }
            try await phone.keep()
            print("This device is no longer enrolled.")
        }
    }
}

#if canImport(Security)
    import Foundation
    import TwofoldClient

    /// "Remember this device" tokens in the Keychain: one generic-password item per server and
    /// account (service "twofold.remembered-device"), readable after the first unlock, on this
    /// device only. A token is a secret that skips the second step; it never leaves the phone
    /// except to its own server.
    public struct KeychainRememberedDevices: RememberedDeviceStore {
        /// The service every token item is filed under.
        public static let service = "twofold.remembered-device"
        private let accessGroup: String?

        /// Tokens kept in `accessGroup` when given.
        public init(accessGroup: String? = nil) { self.accessGroup = accessGroup }

        private func item(_ account: String, _ server: String) -> KeychainItem {
            // Filed as the SDK files them: by origin, and the account name in any case.
            KeychainItem(service: Self.service, account: server + " " + account.lowercased(), accessGroup: accessGroup)
        }

        /// The token for `account` at `server`. One that cannot be read (the phone not yet
        /// unlocked) is none: the sign-in then asks for the second step, as it would anyway.
        public func token(for account: String, at server: String) -> String? {
            (try? item(account, server).read()).map { String(decoding: $0, as: UTF8.self) }
        }

        /// Keeps `token` for each of `accounts` (the username and the email address) at `server`.
        public func keep(_ token: String, for accounts: [String], at server: String) throws {
            for account in accounts { try item(account, server).write(Data(token.utf8)) }
        }
    }
#endif

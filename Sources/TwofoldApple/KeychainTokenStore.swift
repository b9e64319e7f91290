#if canImport(Security)
    import Foundation
    import TwofoldAPI
    import TwofoldClient

    /// The session kept in the Keychain: `StoredSession` as the wire's JSON in one generic-password
    /// item (service "twofold.session"), readable after the first unlock, on this device only.
    /// A phone locked since it started cannot read it yet: that is `TokenStoreNotReadableYet`,
    /// never "signed out", so the app waits instead of showing the sign-in screen.
    public struct KeychainTokenStore: TokenStore {
        /// The service every session item is filed under.
        public static let service = "twofold.session"
        private let item: KeychainItem

        /// A store for the session named `account` (one per app; another name keeps another
        /// session), in `accessGroup` when given.
        public init(account: String = "default", accessGroup: String? = nil) {
            item = KeychainItem(service: Self.service, account: account, accessGroup: accessGroup)
        }

        /// The stored session, `nil` when there is none; `TokenStoreNotReadableYet` before the
        /// first unlock.
        public func load() throws -> StoredSession? {
            try item.read().map { try Wire.decoder().decode(StoredSession.self, from: $0) }
        }

        /// Keeps `session` in place of the one before.
        public func save(_ session: StoredSession) throws {
            try item.write(try Wire.encoder().encode(session))
        }

        /// Removes the stored session.
        public func clear() throws { try item.delete() }
    }
#endif

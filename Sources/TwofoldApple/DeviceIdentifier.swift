#if canImport(Security)
    import Foundation
    import TwofoldClient

    /// The identifier the server knows this phone by (seed 004's `deviceId`): made once, then
    /// kept in the Keychain on this device only, so an update of the app keeps it and another
    /// phone restored from a backup does not get it.
    public enum DeviceIdentifier {
        private static let item = KeychainItem(service: "twofold.device", account: "id", accessGroup: nil)

        /// The identifier, made and kept at the first call. Throws `TokenStoreNotReadableYet`
        /// before the phone's first unlock (a new one is never made then: it would replace the
        /// one the server knows), or `KeychainFailure`.
        public static func current() throws -> String {
            if let kept = try item.read() { return String(decoding: kept, as: UTF8.self) }
            let made = UUID().uuidString.lowercased()
            try item.write(Data(made.utf8))
            return made
        }
    }
#endif

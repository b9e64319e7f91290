#if canImport(Security)
    import Foundation
    import Security
    import TwofoldClient

    /// A Keychain call that failed, with the Keychain's status.
    public struct KeychainFailure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The `OSStatus` the Keychain answered.
        public let status: OSStatus

        /// The failure of a call that answered `status`.
        public init(status: OSStatus) { self.status = status }

        /// The Keychain's words for the status, and the status.
        public var description: String {
            let words = SecCopyErrorMessageString(status, nil) as String? ?? "Keychain error"
            return "\(words) (\(status))"
        }
    }

    /// One generic-password item (`service`, `account`), readable after the phone's first unlock
    /// and never leaving this device (not in backups, not synced). What the token stores and the
    /// device identifier keep their bytes in.
    struct KeychainItem: Sendable {
        let service: String
        let account: String
        let accessGroup: String?

        private var query: [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
                kSecUseDataProtectionKeychain as String: true,
            ]
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        /// The item's bytes, `nil` when there is no item; `TokenStoreNotReadableYet` while the
        /// phone has not been unlocked since it started (the item may well be there).
        func read() throws -> Data? {
            var query = query
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            switch status {
            case errSecSuccess: return result as? Data
            case errSecItemNotFound: return nil
            case errSecInteractionNotAllowed: throw TokenStoreNotReadableYet()
            default: throw KeychainFailure(status: status)
            }
        }

        /// Keeps `data` in the item, made if it is not there.
        func write(_ data: Data) throws {
            let accessible = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            let changes: [String: Any] = [kSecValueData as String: data, kSecAttrAccessible as String: accessible]
            var status = SecItemUpdate(query as CFDictionary, changes as CFDictionary)
            if status == errSecItemNotFound {
                status = SecItemAdd(query.merging(changes) { $1 } as CFDictionary, nil)
            }
            switch status {
            case errSecSuccess: return
            case errSecInteractionNotAllowed: throw TokenStoreNotReadableYet()
            default: throw KeychainFailure(status: status)
            }
        }

        /// Removes the item; no item is not an error.
        func delete() throws {
            let status = SecItemDelete(query as CFDictionary)
            switch status {
            case errSecSuccess, errSecItemNotFound: return
            case errSecInteractionNotAllowed: throw TokenStoreNotReadableYet()
            default: throw KeychainFailure(status: status)
            }
        }
    }
#endif

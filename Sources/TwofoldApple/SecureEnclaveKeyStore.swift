#if canImport(Security) && canImport(LocalAuthentication)
    import Foundation
    import LocalAuthentication
    import Security
    import TwofoldClient
    #if canImport(CryptoKit)
        import CryptoKit
    #endif

    /// Seed 004's key store on a phone: P-256 device keys made in the Secure Enclave, guarded by
    /// `.biometryCurrentSet` (the faces or fingers enrolled when the key was made; the passcode
    /// never opens it, and a changed set invalidates it) or `.devicePasscode`, kept
    /// only while a passcode is set and never leaving this device. On the simulator, or a phone
    /// without a Secure Enclave, the keys are ordinary Keychain keys, and `capabilities()` and
    /// `storage` say so. Every choice (which protection, when to fall back) is the SDK's; this is
    /// the Keychain's side of `DeviceSecurity`.
    public actor SecureEnclaveKeyStore: DeviceSecurity, PromptSimulating {
        /// Whether keys are made in the Secure Enclave.
        public nonisolated let usesSecureEnclave: Bool
        /// Where keys are kept, as the testing dashboard shows it: "Secure Enclave", or the
        /// Keychain and why.
        public nonisolated let storage: String
        /// What the system prompt says before a key signs.
        public nonisolated let reason: String
        /// The Keychain access group the keys go in (`nil`: the app's default group).
        public nonisolated let accessGroup: String?
        private var cancelsNextPrompt = false

        /// A key store whose prompt says `reason`; keys go in `accessGroup` when given.
        public init(reason: String = "Confirm it's you to sign in to Twofold", accessGroup: String? = nil) {
            #if targetEnvironment(simulator)
                (usesSecureEnclave, storage) = (false, "Keychain (simulator)")
            #else
                let available = Self.secureEnclaveAvailable
                usesSecureEnclave = available
                storage = available ? "Secure Enclave" : "Keychain (no Secure Enclave)"
            #endif
            (self.reason, self.accessGroup) = (reason, accessGroup)
        }

        private static var secureEnclaveAvailable: Bool {
            #if canImport(CryptoKit)
                CryptoKit.SecureEnclave.isAvailable
            #else
                false
            #endif
        }

        // MARK: DeviceSecurity

        /// The phone's security as LocalAuthentication reports it, with this store's hardware.
        public func capabilities() -> DeviceCapabilities {
            LocalAuthenticationDevice.capabilities(secureHardware: usesSecureEnclave)
        }

        /// A new key under `tag` (any key there is deleted first), guarded as `protection` asks;
        /// its X9.63 public key. Refused as the virtual phone refuses: no passcode, or a
        /// biometric key without biometry enrolled.
        public func createKey(tag: String, protection: KeyProtection) async throws(DeviceAuthFailure) -> Data {
            let phone = capabilities()
            guard phone.passcodeSet else { throw .passcodeNotSet }
            if protection == .biometric {
                guard phone.biometry != .none else { throw .biometryNotAvailable }
                guard phone.biometryEnrolled else { throw .biometryNotEnrolled }
            }
            let (secureEnclave, accessGroup) = (usesSecureEnclave, accessGroup)
            let key = try await Self.onKeyQueue {
                Self.delete(tag: tag)
                return Self.makeKey(
                    tag: tag, protection: protection, secureEnclave: secureEnclave, accessGroup: accessGroup)
            }.get()
            // The enrolled biometrics the key is bound to, to tell a changed set later.
            Self.keepDomainState(protection == .biometric ? Self.biometricDomainState() : nil, tag: tag)
            return key
        }

        /// Whether the biometric key under `tag` stopped working because the enrolled faces or
        /// fingers changed: the Keychain no longer finds it, LocalAuthentication's domain state
        /// differs from the one kept when it was made, or no biometrics are enrolled any more.
        /// A lockout or the app's Face ID permission turned off gives no domain state either,
        /// and is no change: the key works again once they pass. A key kept from before this
        /// check existed (no domain state kept) is not judged.
        public func biometricKeyInvalidated(tag: String) -> Bool {
            guard let kept = UserDefaults.standard.data(forKey: Self.domainStateKey(tag)) else { return false }
            guard Self.exists(tag: tag) else { return true }
            let context = LAContext()
            var error: NSError?
            _ = context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error)
            if let now = context.evaluatedPolicyDomainState { return now != kept }
            guard let error, error.domain == LAErrorDomain else { return false }
            return LAError.Code(rawValue: error.code) == .biometryNotEnrolled
        }

        /// LocalAuthentication's opaque state of the enrolled biometrics; `nil` with none.
        private static func biometricDomainState() -> Data? {
            let context = LAContext()
            var error: NSError?
            _ = context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error)
            return context.evaluatedPolicyDomainState
        }

        private static func domainStateKey(_ tag: String) -> String { "twofold.biometric-domain-state." + tag }

        /// Keeps (or, with `nil`, forgets) the biometric domain state of the key under `tag`. Not
        /// a secret: a hash that changes when the enrolled biometrics do.
        private static func keepDomainState(_ state: Data?, tag: String) {
            UserDefaults.standard.set(state, forKey: domainStateKey(tag))
        }

        /// `message` signed (ECDSA-SHA256, DER) by the key under `tag`, after the system prompt.
        /// The prompt blocks its thread, so the signing runs on a queue of its own, not on the
        /// actor's.
        public func sign(_ message: Data, tag: String) async throws(DeviceAuthFailure) -> Data {
            guard LocalAuthenticationDevice.passcodeSet() else { throw .passcodeNotSet }
            guard Self.exists(tag: tag) else { throw .keyInvalidated }
            if cancelsNextPrompt {
                cancelsNextPrompt = false
                throw .userCancel
            }
            let reason = reason
            return try await Self.onKeyQueue { Self.sign(message, tag: tag, reason: reason) }.get()
        }

        /// Whether a key is kept under `tag`, asked with interaction not allowed: never a prompt.
        public func hasKey(tag: String) -> Bool { Self.exists(tag: tag) }

        /// Deletes the key under `tag`, if there is one.
        public func deleteKey(tag: String) {
            Self.delete(tag: tag)
            Self.keepDomainState(nil, tag: tag)
        }

        /// Moves the key under `pending` to `tag`, deleting the one there. A Secure Enclave key
        /// cannot be exported and added again, so the item's application tag is updated in place.
        /// With no pending key, nothing changes.
        public func replaceKey(tag: String, with pending: String) {
            guard Self.exists(tag: pending) else { return }
            Self.delete(tag: tag)
            let update = [kSecAttrApplicationTag as String: Data(tag.utf8)]
            _ = SecItemUpdate(Self.keyQuery(tag: pending) as CFDictionary, update as CFDictionary)
            Self.keepDomainState(UserDefaults.standard.data(forKey: Self.domainStateKey(pending)), tag: tag)
            Self.keepDomainState(nil, tag: pending)
        }

        // MARK: PromptSimulating

        /// The testing dashboard's "Simulate Biometric Decline": the next `sign` fails as
        /// `LAError.userCancel` without showing a prompt.
        public func cancelNextPrompt() { cancelsNextPrompt = true }

        // MARK: The Keychain

        /// Where the blocking Keychain calls behind a prompt run.
        private static let keyQueue = DispatchQueue(label: "twofold.device-keys", qos: .userInitiated)

        private static func onKeyQueue<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
            await withCheckedContinuation { continuation in
                keyQueue.async { continuation.resume(returning: work()) }
            }
        }

        /// The private key under `tag`, in the data protection keychain (which Secure Enclave
        /// keys need on macOS, and iOS always uses).
        private static func keyQuery(tag: String) -> [String: Any] {
            [
                kSecClass as String: kSecClassKey,
                kSecAttrKeyClass as String: kSecAttrKeyClassPrivate,
                kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
                kSecAttrApplicationTag as String: Data(tag.utf8),
                kSecUseDataProtectionKeychain as String: true,
            ]
        }

        private static func makeKey(
            tag: String, protection: KeyProtection, secureEnclave: Bool, accessGroup: String?
        ) -> Result<Data, DeviceAuthFailure> {
            // A biometric key opens only with the biometrics enrolled now: a face added later, or
            // the passcode, cannot use it (seed 001: the biometric factor is biometric).
            var flags: SecAccessControlCreateFlags = protection == .biometric ? .biometryCurrentSet : .devicePasscode
            if secureEnclave { flags.insert(.privateKeyUsage) }
            #if targetEnvironment(simulator)
                // The simulator has no device passcode to bind a key to.
                let accessible = kSecAttrAccessibleWhenUnlockedThisDeviceOnly
            #else
                // Gone with the passcode: a phone that loses its security loses its keys (scenario 8).
                let accessible = kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
            #endif
            var error: Unmanaged<CFError>?
            guard let access = SecAccessControlCreateWithFlags(kCFAllocatorDefault, accessible, flags, &error)
            else { return .failure(failure(error)) }
            var privateKey: [String: Any] = [
                kSecAttrIsPermanent as String: true,
                kSecAttrApplicationTag as String: Data(tag.utf8),
                kSecAttrAccessControl as String: access,
            ]
            if let accessGroup { privateKey[kSecAttrAccessGroup as String] = accessGroup }
            var attributes: [String: Any] = [
                kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
                kSecAttrKeySizeInBits as String: 256,
                kSecPrivateKeyAttrs as String: privateKey,
                kSecUseDataProtectionKeychain as String: true,
            ]
            if secureEnclave { attributes[kSecAttrTokenID as String] = kSecAttrTokenIDSecureEnclave }
            guard let key = SecKeyCreateRandomKey(attributes as CFDictionary, &error) else {
                return .failure(failure(error))
            }
            guard let publicKey = SecKeyCopyPublicKey(key),
                let x963 = SecKeyCopyExternalRepresentation(publicKey, &error) as Data?
            else {
                delete(tag: tag)
                return .failure(failure(error))
            }
            return .success(x963)
        }

        private static func sign(_ message: Data, tag: String, reason: String) -> Result<Data, DeviceAuthFailure> {
            // The context carries the prompt's words to the key operation; fetching the key
            // reference does not prompt, signing with it does.
            let context = LAContext()
            context.localizedReason = reason
            var query = keyQuery(tag: tag)
            query[kSecReturnRef as String] = true
            query[kSecUseAuthenticationContext as String] = context
            var item: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &item)
            guard status == errSecSuccess, let item, CFGetTypeID(item) == SecKeyGetTypeID() else {
                return .failure(failure(status: status == errSecSuccess ? errSecItemNotFound : status))
            }
            let key = item as! SecKey  // A CF type: checked by its type ID above.
            var error: Unmanaged<CFError>?
            guard
                let signature = SecKeyCreateSignature(
                    key, .ecdsaSignatureMessageX962SHA256, message as CFData, &error) as Data?
            else { return .failure(failure(error)) }
            return .success(signature)
        }

        private static func exists(tag: String) -> Bool {
            let context = LAContext()
            context.interactionNotAllowed = true
            var query = keyQuery(tag: tag)
            query[kSecUseAuthenticationContext as String] = context
            let status = SecItemCopyMatching(query as CFDictionary, nil)
            // A key that would need the person to be used is still there.
            return status == errSecSuccess || status == errSecInteractionNotAllowed
        }

        private static func delete(tag: String) {
            var query = keyQuery(tag: tag)
            query[kSecAttrKeyClass as String] = nil
            _ = SecItemDelete(query as CFDictionary)
        }

        // MARK: Errors

        private static func failure(_ error: Unmanaged<CFError>?) -> DeviceAuthFailure {
            guard let error = error?.takeRetainedValue() else { return .authenticationFailed }
            let nsError = error as Error as NSError
            if nsError.domain == NSOSStatusErrorDomain { return failure(status: OSStatus(nsError.code)) }
            return LocalAuthenticationDevice.failure(nsError)
        }

        /// A Keychain status in seed 004's words: a cancelled prompt, a key that is gone (the
        /// passcode was removed, or the key was deleted), or a failed authentication.
        private static func failure(status: OSStatus) -> DeviceAuthFailure {
            switch status {
            case errSecUserCanceled: .userCancel
            case errSecItemNotFound: .keyInvalidated
            case errSecAuthFailed: .authenticationFailed
            default: .authenticationFailed
            }
        }
    }
#endif

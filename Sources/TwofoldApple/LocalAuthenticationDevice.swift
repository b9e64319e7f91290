#if canImport(LocalAuthentication)
    import Foundation
    import LocalAuthentication
    import TwofoldClient

    /// What LocalAuthentication says about this phone, in the SDK's words: its biometry and
    /// whether a face or finger is enrolled, whether a passcode is set, and each `LAError` as
    /// seed 004's `DeviceAuthFailure`. Asked without a prompt.
    public enum LocalAuthenticationDevice {
        /// The phone's security now; `secureHardware` is the key store's own answer (the
        /// Secure Enclave is not LocalAuthentication's to report).
        public static func capabilities(secureHardware: Bool) -> DeviceCapabilities {
            let context = LAContext()
            var error: NSError?
            let biometricsReady = context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error)
            let biometricsProblem = code(of: error)
            // `biometryType` is set by `canEvaluatePolicy`, whatever it returned.
            let biometry = biometry(of: context.biometryType)
            error = nil
            let ownerReady = context.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error)
            let passcodeSet = ownerReady || code(of: error) != .passcodeNotSet
            // A lockout means a face or finger is enrolled, just not usable for now.
            let enrolled = passcodeSet && (biometricsReady || biometricsProblem == .biometryLockout)
            return DeviceCapabilities(
                secureHardware: secureHardware, biometry: biometry, biometryEnrolled: enrolled, passcodeSet: passcodeSet
            )
        }

        /// Whether a device passcode is set now (without one, keys guarded by it are gone).
        public static func passcodeSet() -> Bool {
            var error: NSError?
            return LAContext().canEvaluatePolicy(.deviceOwnerAuthentication, error: &error)
                || code(of: error) != .passcodeNotSet
        }

        /// The SDK's name for LocalAuthentication's biometry. Optic ID is not one of seed 004's
        /// kinds: it counts as none rather than passing for Face ID.
        public static func biometry(of type: LABiometryType) -> Biometry {
            switch type {
            case .faceID: .faceID
            case .touchID: .touchID
            default: .none
            }
        }

        /// Seed 004's reason for `error`: an `LAError` by its code; anything else (an error this
        /// adapter does not know) as a failed authentication, which the person may retry.
        public static func failure(_ error: any Error) -> DeviceAuthFailure {
            if let failure = error as? DeviceAuthFailure { return failure }
            guard let code = code(of: error as NSError) else { return .authenticationFailed }
            return failure(code)
        }

        /// Seed 004's reason for an `LAError` code. A prompt the system or the app dismissed,
        /// or the person's "Enter Password" fallback, counts as a cancel: the passcode is offered.
        public static func failure(_ code: LAError.Code) -> DeviceAuthFailure {
            switch code {
            case .userCancel, .systemCancel, .appCancel, .userFallback: .userCancel
            case .biometryNotAvailable: .biometryNotAvailable
            case .biometryNotEnrolled: .biometryNotEnrolled
            case .passcodeNotSet: .passcodeNotSet
            case .biometryLockout: .biometryLockout
            case .authenticationFailed, .invalidContext, .notInteractive: .authenticationFailed
            default: .authenticationFailed
            }
        }

        /// The `LAError` code of `error`, when it is one.
        private static func code(of error: NSError?) -> LAError.Code? {
            guard let error, error.domain == LAErrorDomain else { return nil }
            return LAError.Code(rawValue: error.code)
        }
    }
#endif

#if canImport(LocalAuthentication)
    import Foundation
    import LocalAuthentication
    import TwofoldClient

    /// Seed 002's app lock on LocalAuthentication: Face ID or Touch ID, with the passcode as
    /// the system's own fallback (`.deviceOwnerAuthentication`). A convenience gate only: the
    /// server never hears of it.
    public struct LocalAuthenticationGate: BiometricGate {
        /// A gate asking LocalAuthentication each time.
        public init() {}

        /// Shows the system prompt with `reason`; throws seed 004's reason when it does not pass.
        public func unlock(reason: String) async throws(DeviceAuthFailure) {
            let context = LAContext()
            var error: NSError?
            guard context.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error) else {
                throw LocalAuthenticationDevice.failure(error ?? LAError(.passcodeNotSet))
            }
            do {
                _ = try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: reason)
            } catch {
                throw LocalAuthenticationDevice.failure(error)
            }
        }
    }
#endif

import Foundation
import TwofoldAPI

/// The biometry a phone has (seed 004).
public enum Biometry: String, Codable, Sendable {
    /// Face ID, Touch ID, or no biometry at all.
    case faceID, touchID, none
}

/// What a phone offers for keeping a device key: secure hardware, biometry (and whether a face
/// or finger is enrolled), a passcode. The Apple adapter reads LocalAuthentication; the virtual
/// phone has switches.
public struct DeviceCapabilities: Codable, Sendable, Equatable {
    /// Whether it has secure hardware for keys (a Secure Enclave).
    public var secureHardware: Bool
    /// The biometry it has.
    public var biometry: Biometry
    /// Whether a face or finger is enrolled for that biometry.
    public var biometryEnrolled: Bool
    /// Whether a device passcode is set; without one the phone has no security for keys.
    public var passcodeSet: Bool

    /// The capabilities as the phone reports them (or as a virtual phone is set).
    public init(secureHardware: Bool, biometry: Biometry, biometryEnrolled: Bool, passcodeSet: Bool) {
        (self.secureHardware, self.biometry, self.biometryEnrolled, self.passcodeSet) =
            (secureHardware, biometry, biometryEnrolled, passcodeSet)
    }

    /// Seed 004's three cases: flow A, B or C.
    public var capability: DeviceCapability {
        guard passcodeSet else { return .none }
        return biometry != .none && biometryEnrolled ? .biometricsAvailable : .passcodeOnly
    }
}

extension DeviceCapabilities {
    /// Face ID enrolled and a passcode set: flow A.
    public static let faceID = DeviceCapabilities(
        secureHardware: true, biometry: .faceID, biometryEnrolled: true, passcodeSet: true)
    /// Face ID hardware with no face enrolled, and a passcode: flow B.
    public static let biometryNotEnrolled = DeviceCapabilities(
        secureHardware: true, biometry: .faceID, biometryEnrolled: false, passcodeSet: true)
    /// No passcode (and so no biometrics): flow C.
    public static let noSecurity = DeviceCapabilities(
        secureHardware: true, biometry: .faceID, biometryEnrolled: false, passcodeSet: false)
}

/// Seed 004's `DeviceCapability`.
public enum DeviceCapability: String, Codable, Sendable {
    /// Flow A: "Use Face ID" or "Use Passcode Only".
    case biometricsAvailable
    /// Flow B: "Using passcode authentication".
    case passcodeOnly
    /// Flow C: no device security; SMS only.
    case none
}

/// How a device key is guarded: the biometrics enrolled when it was made
/// (`.biometryCurrentSet`: a changed set of faces or fingers invalidates it, and the passcode
/// never opens it), or the passcode alone (`.devicePasscode`).
public enum KeyProtection: String, Codable, Sendable {
    /// `biometric`: the enrolled biometrics only; `passcode`: the passcode alone.
    case biometric, passcode
}

/// Why a phone could not create or use a key: LocalAuthentication's reasons, each with seed
/// 004's words.
public enum DeviceAuthFailure: Error, Codable, Sendable, Equatable {
    /// The person cancelled the prompt: offer the passcode.
    case userCancel
    /// Biometrics are unavailable or disabled: use the passcode.
    case biometryNotAvailable
    /// No face or finger is enrolled for biometrics.
    case biometryNotEnrolled
    /// No passcode is set: the device has no security.
    case passcodeNotSet
    /// Biometrics are locked out after too many attempts: use the passcode.
    case biometryLockout
    /// The person could not be authenticated (or the key could not sign): try again.
    case authenticationFailed
    /// The key is gone: the biometric set changed, or the device's security was removed.
    case keyInvalidated

    /// Seed 004's message for it.
    public var message: String {
        switch self {
        case .userCancel: "User cancelled - offer passcode"
        case .biometryNotAvailable: "Biometrics disabled - use passcode"
        case .biometryNotEnrolled: "No biometrics enrolled"
        case .passcodeNotSet: "Critical: No device security"
        case .biometryLockout: "Too many attempts - use passcode"
        case .authenticationFailed: "Authentication failed - retry"
        case .keyInvalidated: "The device key is no longer usable - enrol again"
        }
    }

    /// The LocalAuthentication error it stands for, as a log shows it (`LAError.userCancel`)
    /// with its code (`LAError.Code`'s raw value); `nil` for a key that is gone, which the
    /// Keychain reports, not LocalAuthentication.
    public var laError: (name: String, code: Int)? {
        switch self {
        case .authenticationFailed: ("LAError.authenticationFailed", -1)
        case .userCancel: ("LAError.userCancel", -2)
        case .passcodeNotSet: ("LAError.passcodeNotSet", -5)
        case .biometryNotAvailable: ("LAError.biometryNotAvailable", -6)
        case .biometryNotEnrolled: ("LAError.biometryNotEnrolled", -7)
        case .biometryLockout: ("LAError.biometryLockout", -8)
        case .keyInvalidated: nil
        }
    }

    /// The LocalAuthentication code for it and the seed's words, as a results log shows it.
    public var logText: String {
        guard let error = laError else { return message }
        return "\(error.name) (\(error.code)): \(message)"
    }
}

/// Seed 002's app lock: biometrics (or the passcode) as a convenience gate before the app shows
/// a session it already keeps. Never a factor: the server never hears of it, and passing it
/// proves nothing to anyone but the phone. `LAContext` on Apple platforms; the virtual phone here.
public protocol BiometricGate: Sendable {
    /// Asks the person to unlock, saying `reason`; throws why it did not happen.
    func unlock(reason: String) async throws(DeviceAuthFailure)
}

/// A phone's key store: the Secure Enclave on iOS (the next issue's adapter), the virtual
/// phone in tests and the command-line tool. Keys are named by `tag` (per account and device).
public protocol DeviceSecurity: Sendable {
    /// What the phone offers now for keeping a device key.
    func capabilities() async -> DeviceCapabilities
    /// A new P-256 key under `tag` (replacing one there), guarded as `protection` asks; its
    /// public key as X9.63 (65 bytes, uncompressed).
    func createKey(tag: String, protection: KeyProtection) async throws(DeviceAuthFailure) -> Data
    /// A DER ECDSA-SHA256 signature over `message` with the key under `tag`, after the prompt
    /// its protection asks for.
    func sign(_ message: Data, tag: String) async throws(DeviceAuthFailure) -> Data
    /// Whether a key is kept under `tag` (asked without a prompt).
    func hasKey(tag: String) async -> Bool
    /// Deletes the key under `tag`, if there is one.
    func deleteKey(tag: String) async
    /// Puts the key under `pending` in the place of the one under `tag` (which is deleted): a
    /// new key takes over only once the server has taken it.
    func replaceKey(tag: String, with pending: String) async
    /// Whether the biometric key made under `tag` no longer works because the enrolled faces or
    /// fingers changed since (or were all removed): the key is gone, or LocalAuthentication's
    /// `evaluatedPolicyDomainState` differs from the one kept when it was made. Asked without a
    /// prompt; `false` when no biometric key was made under `tag`.
    func biometricKeyInvalidated(tag: String) async -> Bool
}

/// A phone whose next prompt can be made to fail as if the person had declined it: the
/// testing dashboard's "Simulate Biometric Decline" (a switch on the virtual phone, a debug
/// flag in the Secure Enclave adapter).
public protocol PromptSimulating: Sendable {
    /// The next prompt ends as `LAError.userCancel` would.
    func cancelNextPrompt() async
}

/// Whether the phone looks jailbroken or rooted (seed 000's edge case: "show a security warning,
/// allow proceed"). A heuristic on any phone — what it finds a determined attacker can hide —
/// so it warns and never blocks. `JailbreakSigns` on iOS; a fixed answer in tests.
public protocol DeviceIntegrityCheck: Sendable {
    /// Whether signs of a jailbroken or rooted phone were found.
    func looksCompromised() async -> Bool
}

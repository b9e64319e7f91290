import Crypto
import Foundation
import TwofoldClient

/// A phone in software with the switches seed 004's scenarios turn: secure hardware, biometry
/// (Face ID, Touch ID, none) and whether it is enrolled, a passcode, the person cancelling the
/// prompt, biometry locked out, the biometric set changed (biometric keys invalidated), and the
/// device's security removed (every key gone). Its keys are `SoftwareDeviceKey`s, each with the
/// protection it was made with, and sign as the Secure Enclave does. The SDK's flows take it
/// where the Apple adapter goes on a phone.
public actor VirtualPhone: DeviceSecurity, BiometricGate, PromptSimulating {
    /// The phone's security: secure hardware, biometry and whether it is enrolled, a passcode.
    public var state: DeviceCapabilities
    /// The next prompt is cancelled ("Don't Allow", or the person dismissing it).
    public var cancelsNextPrompt = false
    /// Biometrics locked out after too many failures: biometric prompts fail.
    public var biometryLockedOut = false
    private var keys: [String: (key: SoftwareDeviceKey, protection: KeyProtection)] = [:]
    /// Biometric keys a change of the enrolled biometrics invalidated, until deleted or made again.
    private var invalidated: Set<String> = []
    /// Every prompt shown, in order: what the person was asked for.
    public private(set) var prompts: [KeyProtection] = []

    /// A phone with Face ID enrolled and a passcode (flow A).
    public init(_ state: DeviceCapabilities = .faceID) {
        self.state = state
    }

    // MARK: Switches

    /// Sets the phone's security to `state`. Its keys stay as they are, except that removing
    /// every face or finger invalidates the biometric keys, as on a phone (`.biometryCurrentSet`).
    public func set(_ state: DeviceCapabilities) {
        if self.state.biometryEnrolled && !state.biometryEnrolled { invalidateBiometricKeys() }
        self.state = state
    }
    /// Makes the person cancel the next prompt.
    public func cancelNextPrompt() { cancelsNextPrompt = true }
    /// Locks biometrics out (or, with `false`, lets them in again).
    public func lockOutBiometry(_ locked: Bool = true) { biometryLockedOut = locked }

    /// The enrolled faces or fingers changed: keys guarded by biometrics stop working, as a
    /// phone's `.biometryCurrentSet` keys do. By default the Keychain no longer finds them;
    /// `keepingItems` leaves them listed but unable to sign, as a phone may, so that only the
    /// changed `evaluatedPolicyDomainState` tells (`biometricKeyInvalidated(tag:)`).
    public func changeBiometricSet(keepingItems: Bool = false) { invalidateBiometricKeys(keepingItems: keepingItems) }

    private func invalidateBiometricKeys(keepingItems: Bool = false) {
        for (tag, entry) in keys where entry.protection == .biometric { invalidated.insert(tag) }
        if !keepingItems { keys = keys.filter { $0.value.protection != .biometric } }
    }

    /// The passcode (and with it biometrics) was turned off: every key is gone (scenario 8).
    public func removeSecurity() {
        state.passcodeSet = false
        state.biometryEnrolled = false
        invalidateBiometricKeys()
        keys = [:]
    }

    /// Whether the biometric key under `tag` was invalidated by a change of the enrolled biometrics.
    public func biometricKeyInvalidated(tag: String) -> Bool { invalidated.contains(tag) }

    /// Whether a key is kept under `tag`.
    public func hasKey(tag: String) -> Bool { keys[tag] != nil }

    // MARK: Kept between runs

    /// The phone's keys as `PhoneFolder` writes them, private keys included.
    public func savedKeys() -> [String: PhoneFolder.Phone.Key] {
        keys.mapValues { PhoneFolder.Phone.Key(privateKey: $0.key.rawRepresentation, protection: $0.protection) }
    }

    /// The phone a `PhoneFolder` kept: its switches and its keys.
    public init(_ kept: PhoneFolder.Phone) throws {
        state = kept.state
        biometryLockedOut = kept.biometryLockedOut
        keys = try kept.keys.mapValues { (try SoftwareDeviceKey(rawRepresentation: $0.privateKey), $0.protection) }
    }

    // MARK: DeviceSecurity

    /// The phone's security as it is now.
    public func capabilities() -> DeviceCapabilities { state }

    /// A new key under `tag` guarded as `protection`; its X9.63 public key. Throws without a passcode, and
    /// for a biometric key without biometry enrolled.
    public func createKey(tag: String, protection: KeyProtection) throws(DeviceAuthFailure) -> Data {
        guard state.passcodeSet else { throw .passcodeNotSet }
        if protection == .biometric {
            guard state.biometry != .none else { throw .biometryNotAvailable }
            guard state.biometryEnrolled else { throw .biometryNotEnrolled }
        }
        let key = SoftwareDeviceKey()
        keys[tag] = (key, protection)
        invalidated.remove(tag)
        return key.privateKey.publicKey.x963Representation
    }

    /// Signs `message` with the key under `tag` after its prompt; throws when the prompt is cancelled,
    /// biometrics are locked out, the key is gone or there is no passcode.
    public func sign(_ message: Data, tag: String) throws(DeviceAuthFailure) -> Data {
        guard state.passcodeSet else { throw .passcodeNotSet }
        guard let entry = keys[tag], !invalidated.contains(tag) else { throw .keyInvalidated }
        prompts.append(entry.protection)
        if cancelsNextPrompt {
            cancelsNextPrompt = false
            throw .userCancel
        }
        if entry.protection == .biometric && biometryLockedOut { throw .biometryLockout }
        do {
            return try entry.key.privateKey.signature(for: message).derRepresentation
        } catch {
            throw .authenticationFailed
        }
    }

    /// The app lock's prompt: biometrics when enrolled (unless locked out), else the passcode;
    /// throws when the person cancels or the phone has no passcode.
    public func unlock(reason: String) throws(DeviceAuthFailure) {
        guard state.passcodeSet else { throw .passcodeNotSet }
        let biometric = state.capability == .biometricsAvailable && !biometryLockedOut
        prompts.append(biometric ? .biometric : .passcode)
        if cancelsNextPrompt {
            cancelsNextPrompt = false
            throw .userCancel
        }
    }

    /// Deletes the key under `tag`, if any.
    public func deleteKey(tag: String) {
        keys[tag] = nil
        invalidated.remove(tag)
    }

    /// Puts the key under `pending` in place of the one under `tag`; with no pending key, nothing changes.
    public func replaceKey(tag: String, with pending: String) {
        guard let key = keys.removeValue(forKey: pending) else { return }
        keys[tag] = key
        invalidated.remove(tag)
    }
}

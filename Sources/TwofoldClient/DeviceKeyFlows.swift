import Foundation
import TwofoldAPI

/// What an enrolment came to (seed 004's flows A, B and C).
public enum DeviceEnrolment: Sendable, Equatable {
    /// A key was made and the server took it.
    case enrolled(KeyProtection)
    /// SMS codes were enrolled for the device (flow C).
    case enrolledForSMS
    /// The person cancelled biometrics: offer the passcode instead (scenario 2).
    case offerPasscode(DeviceAuthFailure)
    /// The device has no security: enrolment with a key is blocked; offer SMS (flow C).
    case blocked(String)
    /// The phone refused for another reason.
    case failed(DeviceAuthFailure)
}

/// Seed 004's device-bound sign-in on the SDK: enrolment along flows A (biometrics or passcode),
/// B (passcode only) and C (no device security: SMS only), sign-in by signing the server's
/// challenge, the SMS fallback, and the method changes of scenarios 8 to 10. The phone's key
/// store is a `DeviceSecurity` (the Secure Enclave, or the virtual phone).
public actor DeviceKeyFlows: DeviceKeySigners {
    private let session: SessionManager
    private let device: any DeviceSecurity
    private let stepUp: (any StepUpProviding)?
    /// The identifier the server knows this device by.
    public nonisolated let deviceID: String

    /// `stepUp` proves a factor again when the server asks before a change (adding, replacing
    /// or removing the device's method); without it the refusal is thrown.
    public init(
        session: SessionManager, device: any DeviceSecurity, deviceID: String, stepUp: (any StepUpProviding)? = nil
    ) {
        (self.session, self.device, self.deviceID, self.stepUp) = (session, device, deviceID, stepUp)
    }

    /// `call` with the session's token, stepped up when the server asks.
    private func authorized<T: Sendable>(_ call: @Sendable (String) async throws -> T) async throws -> T {
        try await session.authorized(stepUp: stepUp, call)
    }

    private var client: APIClient { session.client }

    /// The key's tag: one per server, account and device, so that a key made for one server never
    /// signs a challenge another server hands it.
    public nonisolated func tag(for username: String) -> String {
        Self.tag(origin: session.client.origin, username: username, deviceID: deviceID)
    }

    /// The key's tag for `username` on device `deviceID` of the server at `origin`.
    public static func tag(origin: String, username: String, deviceID: String) -> String {
        "twofold.\(origin).\(username.lowercased()).\(deviceID)"
    }

    /// This device's key for `username` as a second factor after the password (`SignInFlow`).
    public nonisolated func signer(username: String) -> some DeviceKeySigning {
        Signer(deviceID: deviceID, device: device, tag: tag(for: username))
    }

    /// What the phone offers now (its security, as a settings screen shows it).
    public func capabilities() async -> DeviceCapabilities { await device.capabilities() }

    /// Whether this phone still keeps its key for `username` (asked without a prompt): the phone
    /// deletes a key when the passcode is turned off, and a biometric key when the enrolled faces
    /// or fingers change.
    public func keepsKey(username: String) async -> Bool { await device.hasKey(tag: tag(for: username)) }

    /// What changed in this phone's security since it was enrolled as `method` for `username`
    /// (the server's `secureEnclave` or `smsOTP`), as the app notices it on launch and on return
    /// to the foreground (seed 004 scenarios 8–10, seed 001's "biometrics changed"); `nil` when
    /// nothing the app should act on did. `capabilities` are the phone's as just read, when the
    /// caller has them; otherwise they are read here.
    public func securityChange(
        enrolledAs method: String, username: String, capabilities read: DeviceCapabilities? = nil
    ) async -> DeviceSecurityChange? {
        let capabilities: DeviceCapabilities
        if let read { capabilities = read } else { capabilities = await device.capabilities() }
        switch method {
        case "secureEnclave" where !(await keepsKey(username: username)):
            return capabilities.passcodeSet ? .keyLost : .securityRemoved
        case "secureEnclave" where await device.biometricKeyInvalidated(tag: tag(for: username)):
            // Still listed, but a biometric key made before the enrolled faces or fingers changed
            // no longer signs; a passcode key is never invalidated so.
            return .keyLost
        case "smsOTP" where capabilities.passcodeSet && capabilities.secureHardware:
            return .canUpgrade(capabilities.biometryEnrolled ? capabilities.biometry : .none)
        default:
            return nil
        }
    }

    /// This device's key for the account typed as `name`, when it keeps one. A key is tagged by
    /// the username it was enrolled for: an email address typed finds none.
    public nonisolated func signer(forAccount name: String) async -> (any DeviceKeySigning)? {
        let signer = Signer(deviceID: deviceID, device: device, tag: tag(for: name))
        return await device.hasKey(tag: signer.tag) ? signer : nil
    }

    private struct Signer: DeviceKeySigning {
        let deviceID: String
        let device: any DeviceSecurity
        let tag: String

        func sign(challenge: Data) async throws(DeviceAuthFailure) -> Data {
            try await device.sign(challenge, tag: tag)
        }
    }

    // MARK: Enrolment (signed in)

    static let noSecurity = "Please set up device passcode in Settings"

    /// Enrols this device for the signed-in `username` with a key guarded as `protection`;
    /// `nil` lets the phone decide (biometrics when it has them, else the passcode).
    public func enroll(username: String, protection: KeyProtection? = nil) async throws -> DeviceEnrolment {
        let capabilities = await device.capabilities()
        if capabilities.capability == .passcodeOnly, protection == .biometric {
            return .failed(capabilities.biometry == .none ? .biometryNotAvailable : .biometryNotEnrolled)
        }
        let chosen = protection ?? (capabilities.capability == .biometricsAvailable ? .biometric : .passcode)
        return try await withNewKey(for: username, protection: chosen) { [client, deviceID] key, token in
            _ = try await client.send(
                API.DeviceKeys.enroll,
                DeviceEnrollRequest(
                    username: username, publicKey: key.base64EncodedString(), method: "secureEnclave",
                    deviceId: deviceID),
                bearer: token)
        }
    }

    /// Flow C: SMS codes to the account's verified phone sign this device in.
    public func enrollForSMS(username: String) async throws -> DeviceEnrolment {
        _ = try await authorized { [client, deviceID] in
            try await client.send(
                API.DeviceKeys.enroll, DeviceEnrollRequest(username: username, method: "smsOTP", deviceId: deviceID),
                bearer: $0)
        }
        return .enrolledForSMS
    }

    /// Scenarios 9 and 10: a new key (after security came back, or to switch between biometrics
    /// and the passcode) replaces the device's key or its SMS enrolment.
    public func upgrade(username: String, protection: KeyProtection) async throws -> DeviceEnrolment {
        try await withNewKey(for: username, protection: protection) { [client, deviceID] key, token in
            _ = try await client.send(
                API.DeviceKeys.upgrade,
                DeviceUpgradeRequest(username: username, deviceId: deviceID, publicKey: key.base64EncodedString()),
                bearer: token)
        }
    }

    /// Makes a new key beside the device's own (under a pending tag), tests it with one signature
    /// (seed 004's "test key": the prompt works before the server hears of it), and hands its
    /// public key to `register`. Only once the server has taken it does it replace the device's
    /// key; a refusal by the phone or the server leaves the device's key as it was, still the
    /// one the server holds.
    private func withNewKey(
        for username: String, protection: KeyProtection,
        register: @Sendable (_ publicKey: Data, _ token: String) async throws -> Void
    ) async throws -> DeviceEnrolment {
        guard await device.capabilities().capability != .none else { return .blocked(Self.noSecurity) }
        let pending = tag(for: username) + ".pending"
        let key: Data
        do {
            key = try await device.createKey(tag: pending, protection: protection)
            _ = try await device.sign(Data("twofold key test".utf8), tag: pending)
        } catch {
            await device.deleteKey(tag: pending)
            return error == .userCancel && protection == .biometric ? .offerPasscode(error) : .failed(error)
        }
        do {
            try await authorized { try await register(key, $0) }
        } catch {
            await device.deleteKey(tag: pending)
            throw error
        }
        await device.replaceKey(tag: tag(for: username), with: pending)
        return .enrolled(protection)
    }

    /// Scenario 8: the device's security is gone (and its key with it): SMS codes from now on.
    public func downgrade(username: String) async throws {
        await device.deleteKey(tag: tag(for: username))
        _ = try await authorized { [client, deviceID] in
            try await client.send(
                API.DeviceKeys.downgrade, DeviceRequest(username: username, deviceId: deviceID), bearer: $0)
        }
    }

    /// Ends this device's enrolment for `username` on the server, then deletes its key on the phone.
    public func unenroll(username: String) async throws {
        _ = try await authorized { [client, deviceID] in
            try await client.send(
                API.DeviceKeys.unenroll, DeviceRequest(username: username, deviceId: deviceID), bearer: $0)
        }
        await device.deleteKey(tag: tag(for: username))
    }

    // MARK: Sign-in (signed out)

    /// What a device sign-in came to.
    public enum SignIn: Sendable, Equatable {
        /// Signed in as this user; the `SessionManager` keeps the session.
        case signedIn(UserDTO)
        /// The phone could not sign (cancelled, locked out, key gone): offer the SMS fallback.
        case useSMS(DeviceAuthFailure)
        /// The server signs this device in with SMS codes (enrolled for them, or not known to
        /// it): no prompt was shown; ask for a code.
        case smsCode
        /// The server refused: its code and words.
        case refused(ErrorCode?, String)
    }

    /// Scenario 6: the server's challenge, signed behind the key's prompt, exchanged for a session.
    public func signIn(username: String) async throws -> SignIn {
        let challenge = try await client.send(
            API.DeviceKeys.initiate, DeviceRequest(username: username, deviceId: deviceID))
        guard challenge.method == "secureEnclave" else { return .smsCode }
        guard let bytes = Data(base64Encoded: challenge.challenge) else {
            return .refused(nil, "The server's challenge is not base64.")
        }
        let signature: Data
        do {
            signature = try await device.sign(bytes, tag: tag(for: username))
        } catch {
            return .useSMS(error)
        }
        do {
            let answer = try await client.send(
                API.DeviceKeys.verifySignature,
                VerifySignatureRequest(
                    username: username, deviceId: deviceID, challengeId: challenge.challengeId,
                    signature: signature.base64EncodedString()))
            return .signedIn(try await keep(answer))
        } catch let error as APIError {
            return .refused(error.code, error.problem?.detail ?? "HTTP \(error.status)")
        }
    }

    /// Scenario 7: a code by SMS for `username`.
    public func requestSMSCode(username: String) async throws -> RequestOTPResponse {
        try await client.send(API.DeviceKeys.requestOTP, RequestOTPRequest(username: username))
    }

    /// Scenario 7: the SMS code, exchanged for a session.
    public func signIn(username: String, smsCode: String) async throws -> SignIn {
        do {
            let answer = try await client.send(
                API.DeviceKeys.verifyOTP, DeviceVerifyOTPRequest(username: username, otp: smsCode))
            return .signedIn(try await keep(answer))
        } catch let error as APIError {
            return .refused(error.code, error.problem?.detail ?? "HTTP \(error.status)")
        }
    }

    /// Keeps a device sign-in's tokens as the session (the user read with the new token). Seed
    /// 004's answer gives the refresh token bare, without its expiry: it is taken as valid until
    /// the server refuses it (a refused refresh signs out, as for any session).
    private func keep(_ answer: DeviceTokenResponse) async throws -> UserDTO {
        guard let refresh = answer.refreshToken, let expiresAt = answer.expiresAt else {
            throw UnreadableAnswer(endpoint: "device sign-in", status: 200, reason: "no refresh token or expiry")
        }
        let user = try await client.send(API.Account.show, bearer: answer.token)
        await session.signedIn(
            AuthTokensResponse(
                accessToken: TokenDTO(token: answer.token, expiresAt: expiresAt),
                refreshToken: TokenDTO(token: refresh, expiresAt: .distantFuture), user: user))
        return user
    }
}

/// What the app notices about the phone's security (seed 004 scenarios 8–10, seed 001's
/// "biometrics changed"), and what it offers for each.
public enum DeviceSecurityChange: Sendable, Equatable {
    /// The passcode was turned off: the phone deleted the key, which no longer signs in. A
    /// critical alert; the way on is text message codes.
    case securityRemoved
    /// The key is gone though the passcode is set (the enrolled faces or fingers changed, or
    /// the app was reinstalled): set it up again.
    case keyLost
    /// The phone signs in with text message codes but has a passcode again: "Upgrade to
    /// biometric security?", with biometrics when enrolled.
    case canUpgrade(Biometry)
}

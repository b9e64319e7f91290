import Foundation
import Observation
import TwofoldAPI
import TwofoldClient

extension Biometry {
    /// The biometry's name as a button says it ("Face ID").
    public var name: String {
        switch self {
        case .faceID: "Face ID"
        case .touchID: "Touch ID"
        case .none: "Biometrics"
        }
    }
}

/// Seed 004's enrolment screen on the SDK's `DeviceKeyFlows`: the phone's security decides the
/// path. A: "Use Face ID" or "Use Passcode Only" (a declined prompt offers the passcode); B:
/// "Using passcode authentication"; C: no passcode, enrolment blocked with the seed's alert and
/// the SMS-only offer.
@MainActor @Observable
public final class EnrollmentModel {
    /// What the screen shows.
    public enum Phase: Sendable, Equatable {
        /// Reading the phone's security.
        case checking
        /// Flow A: the choice between biometrics (named) and the passcode.
        case choose(Biometry)
        /// Flow B: "Using passcode authentication".
        case passcodeOnly
        /// Flow C: "Please set up device passcode in Settings", with the SMS-only offer.
        case noSecurity
        /// A prompt or request is out.
        case working
        /// The person declined biometrics: "Use Passcode Instead?"
        case offerPasscode
        /// Enrolled with a key guarded so.
        case enrolled(KeyProtection)
        /// Enrolled for SMS codes.
        case enrolledForSMS
    }

    /// What the screen shows now.
    public private(set) var phase: Phase = .checking
    /// What the phone reported.
    public private(set) var capabilities: DeviceCapabilities?
    /// What went wrong last, in words (a phone's reason in seed 004's words).
    public private(set) var message: String?
    /// The phone's reason for the last failure, for the results log.
    public private(set) var failure: DeviceAuthFailure?
    private let flows: DeviceKeyFlows
    private let device: any DeviceSecurity
    private let username: String

    /// Enrolment of this phone (`device`, through `flows`) for the signed-in `username`.
    public init(flows: DeviceKeyFlows, device: any DeviceSecurity, username: String) {
        (self.flows, self.device, self.username) = (flows, device, username)
    }

    /// Seed 004's alert for flow C.
    public static let noSecurityAlert = "Please set up device passcode in Settings"

    /// Reads the phone's security and picks the path.
    public func check() async {
        let capabilities = await device.capabilities()
        self.capabilities = capabilities
        failure = nil
        switch capabilities.capability {
        case .biometricsAvailable:
            phase = .choose(capabilities.biometry)
            message = nil
        case .passcodeOnly:
            phase = .passcodeOnly
            message = "Using passcode authentication"
        case .none:
            phase = .noSecurity
            message = Self.noSecurityAlert
        }
    }

    /// "Use Face ID": a key behind biometrics.
    public func useBiometrics() async { await enroll(.biometric) }

    /// "Use Passcode Only" (flow A), "Use Passcode Instead" after a decline, or flow B's enrolment.
    public func usePasscode() async { await enroll(.passcode) }

    /// Flow C's offer: SMS codes to the account's verified number sign this phone in.
    public func useSMSOnly() async {
        phase = .working
        do {
            _ = try await flows.enrollForSMS(username: username)
            phase = .enrolledForSMS
            message = nil
        } catch {
            phase = .noSecurity
            message = SignInProblem.of(error).message
        }
    }

    private func enroll(_ protection: KeyProtection) async {
        let before = phase
        phase = .working
        do {
            switch try await flows.enroll(username: username, protection: protection) {
            case .enrolled(let protection):
                phase = .enrolled(protection)
                (message, failure) = (nil, nil)
            case .enrolledForSMS:
                phase = .enrolledForSMS
            case .offerPasscode(let reason):
                phase = .offerPasscode
                (message, failure) = ("Use Passcode Instead?", reason)
            case .blocked(let words):
                phase = .noSecurity
                (message, failure) = (words, .passcodeNotSet)
            case .failed(let reason):
                await check()
                (message, failure) = (reason.message, reason)
            }
        } catch {
            phase = before
            message = SignInProblem.of(error).message
        }
    }
}

/// Seed 004's authentication screen: the username, the phone's prompt over the server's
/// challenge, and what to do when it does not sign: try the prompt again (a declined or failed
/// prompt, biometrics locked out: the passcode is behind it), sign in with the password and a
/// second factor, or, for a device enrolled for SMS codes, the code (requested, typed, with the
/// lockout). The server sends SMS sign-in codes only to devices enrolled for them
/// (`docs/seed-divergences.md`), so a key that fails never offers a code that would not come.
@MainActor @Observable
public final class DeviceSignInModel {
    /// What the screen shows.
    public enum Phase: Sendable, Equatable {
        /// The username.
        case username
        /// A prompt or request is out.
        case working
        /// The SMS code, with the server's notice of where it went.
        case smsCode(sentTo: String?)
        /// Signed in.
        case signedIn(UserDTO)
    }

    /// The username typed.
    public var username = ""
    /// The SMS code typed.
    public private(set) var code = CodeEntry()
    /// What the screen shows now.
    public private(set) var phase: Phase = .username
    /// What went wrong last, in words.
    public private(set) var message: String?
    /// The phone's reason when it could not sign.
    public private(set) var failure: DeviceAuthFailure?
    /// Whether a code by SMS is offered (the device signs in with SMS codes).
    public private(set) var offerSMS = false
    /// Whether trying the prompt again may work (declined, failed, biometrics locked out).
    public private(set) var offerRetry = false
    /// Whether the password sign-in is offered instead (the key could not sign).
    public private(set) var offerPassword = false
    private let flows: DeviceKeyFlows

    /// Sign-in on this phone through `flows` (a signed-out session).
    public init(flows: DeviceKeyFlows) { self.flows = flows }

    /// Signs in: the server's challenge, signed behind the phone's prompt; the SMS code when
    /// the device is enrolled for it.
    public func signIn() async {
        guard !username.isEmpty else { return }
        phase = .working
        (offerSMS, offerRetry, offerPassword) = (false, false, false)
        do {
            switch try await flows.signIn(username: username) {
            case .signedIn(let user):
                (phase, message, failure) = (.signedIn(user), nil, nil)
            case .useSMS(let reason):
                (phase, failure, message) = (.username, reason, reason.message)
                offerRetry = [.userCancel, .authenticationFailed, .biometryLockout].contains(reason)
                offerPassword = true
            case .smsCode:
                (phase, failure, offerSMS) = (.username, nil, true)
                message = "This device signs in with a text message code."
            case .refused(_, let words):
                (phase, failure, offerPassword) = (.username, nil, true)
                message = words
            }
        } catch {
            phase = .username
            message = SignInProblem.of(error).message
        }
    }

    /// Asks the server for an SMS code.
    public func useSMS() async {
        guard !username.isEmpty else { return }
        phase = .working
        do {
            let sent = try await flows.requestSMSCode(username: username)
            phase = .smsCode(sentTo: sent.message)
            message = nil
            code.clear()
        } catch {
            phase = .username
            message = SignInProblem.of(error).message
        }
    }

    /// What was typed or pasted; a complete code is sent at once.
    public func type(_ text: String) async {
        code.paste(text)
        if code.isComplete { await submit() }
    }

    /// Sends the SMS code.
    public func submit() async {
        guard case .smsCode(let sentTo) = phase, code.isComplete else { return }
        phase = .working
        do {
            switch try await flows.signIn(username: username, smsCode: code.submission) {
            case .signedIn(let user):
                (phase, message) = (.signedIn(user), nil)
            case .useSMS(let reason):
                (phase, message) = (.smsCode(sentTo: sentTo), reason.message)
            case .smsCode:
                phase = .smsCode(sentTo: sentTo)
            case .refused(let errorCode, let words):
                phase = .smsCode(sentTo: sentTo)
                message = errorCode == .invalidCode ? SignInProblem.wrongCode(attemptsRemaining: nil).message : words
                code.clear()
            }
        } catch {
            phase = .smsCode(sentTo: sentTo)
            message = SignInProblem.of(error).message
        }
    }

    /// Back to the username.
    public func startOver() {
        (phase, message, failure, offerSMS, offerRetry, offerPassword) = (.username, nil, nil, false, false, false)
        code.clear()
    }
}

/// Seed 004's settings: how this phone signs in (the server's word for it), the phone number,
/// switching between biometrics and the passcode, SMS only when the phone's security went away,
/// and unenrolling (the key deleted on the phone once the server has let go).
@MainActor @Observable
public final class DeviceSettingsModel {
    /// This device as the server lists it; `nil` when it is not enrolled.
    public private(set) var device: DeviceDTO?
    /// The account's phone number, masked.
    public private(set) var phone: String?
    /// What the phone offers, as last read (for "Switch to Face ID").
    public private(set) var capabilities: DeviceCapabilities?
    /// A prompt or request is out.
    public private(set) var working = false
    /// What happened last, in words.
    public private(set) var message: String?
    /// What changed in the phone's security since it enrolled, as the last `check()` found it.
    public private(set) var change: SecurityChange?
    private let flows: DeviceKeyFlows
    private let session: SessionManager
    private let username: String

    /// What the app notices about the phone's security (the SDK's `DeviceSecurityChange`):
    /// `securityRemoved` leads to `useSMSOnly()`, `keyLost` and `canUpgrade` to `switchTo(_:)`.
    public typealias SecurityChange = DeviceSecurityChange

    /// The change in words, as the alert says it.
    public var changeText: String? {
        switch change {
        case .securityRemoved?:
            "Your phone no longer has a passcode, so its key was deleted and can't sign you in. Use text message codes instead."
        case .keyLost?: "This phone's key no longer works. Set it up again to keep signing in with it."
        case .canUpgrade(let biometry)?:
            biometry == .none
                ? "Your phone has a passcode again. Use it to sign in instead of text message codes?"
                : "Upgrade to biometric security? Sign in with \(biometry.name) instead of text message codes."
        case nil: nil
        }
    }

    /// Compares what the phone can do now with how it is enrolled (on launch and on return to
    /// the foreground): `change` says what the app should offer, or `nil`.
    public func check() async {
        await load()
        guard let device, let capabilities else {
            change = nil
            return
        }
        change = await flows.securityChange(enrolledAs: device.method, username: username, capabilities: capabilities)
    }

    /// Settings of this phone (`flows`) for the signed-in `username` on `session`.
    public init(flows: DeviceKeyFlows, session: SessionManager, username: String) {
        (self.flows, self.session, self.username) = (flows, session, username)
    }

    /// The method in words.
    public var methodText: String {
        switch device?.method {
        case "secureEnclave": "This device's key (Secure Enclave)"
        case "smsOTP": "Text message codes"
        case let other?: other
        case nil: "Not enrolled"
        }
    }

    /// "Switch to Face ID", "Switch to Touch ID", or "Switch to Biometrics" before the phone is read.
    public var switchToBiometryTitle: String { "Switch to \((capabilities?.biometry ?? Biometry.none).name)" }

    /// Whether switching to biometrics can work: the phone has biometry with a face or finger
    /// enrolled (otherwise the key could only ask for the passcode).
    public var canUseBiometry: Bool { capabilities.map { $0.biometry != .none && $0.biometryEnrolled } ?? false }

    /// Reads this device's enrolment and the account's number.
    public func load() async {
        capabilities = await flows.capabilities()
        await run {
            let token = try await self.session.accessToken()
            let client = self.session.client
            let devices = try await client.send(API.DeviceKeys.devices, self.username, bearer: token).devices
            self.device = devices.first { $0.deviceId == self.flows.deviceID }
            let me = try await client.send(API.Account.show, bearer: token)
            self.phone = me.phoneNumber.map { PhoneMask.masked($0) }
        }
    }

    /// "Switch to Passcode Only" or "Switch to Face ID": a new key replaces the old.
    public func switchTo(_ protection: KeyProtection) async {
        await run {
            let outcome = try await self.flows.upgrade(username: self.username, protection: protection)
            self.message = EnrolmentWords.text(outcome)
        }
        await check()
    }

    /// SMS codes from now on (the phone's security is gone).
    public func useSMSOnly() async {
        await run {
            try await self.flows.downgrade(username: self.username)
            self.message = "Text message codes from now on."
        }
        await check()
    }

    /// Unenrols this phone; its key is deleted.
    public func unenroll() async {
        await run {
            try await self.flows.unenroll(username: self.username)
            self.message = "This device is no longer enrolled."
        }
        await check()
    }

    private func run(_ body: @MainActor () async throws -> Void) async {
        working = true
        defer { working = false }
        do {
            try await body()
        } catch {
            message = SignInProblem.of(error).message
        }
    }
}

/// An enrolment's outcome in words.
public enum EnrolmentWords {
    /// `outcome` as a screen or a log says it.
    public static func text(_ outcome: DeviceEnrolment) -> String {
        switch outcome {
        case .enrolled(.biometric): "Enrolled: biometrics guard this device's key."
        case .enrolled(.passcode): "Enrolled: the passcode guards this device's key."
        case .enrolledForSMS: "Enrolled for text message codes."
        case .offerPasscode(let reason): "\(reason.message). Use the passcode instead?"
        case .blocked(let words): words
        case .failed(let reason): reason.message
        }
    }
}

import Foundation
import TwofoldAPI
import TwofoldCore

/// A device second factor of seed 001: the PIN or biometrics.
public enum SecondFactorType: String, Sendable, Equatable, Codable {
    /// The device PIN, or biometrics (a key behind the biometric prompt).
    case pin, biometrics
}

/// What a device second-factor flow asks the person for (seed 001's `CurrentUserInteraction`).
public struct SecondFactorInteraction: Sendable, Equatable {
    /// Whether the person sets a new factor or proves one the device has.
    public enum Kind: Sendable, Equatable {
        /// Choose a new factor (`SET_SECOND_FACTOR`): the PIN twice, or the biometric prompt.
        case setSecondFactor
        /// Prove a factor the device has (`VERIFY_SECOND_FACTOR`).
        case verifySecondFactor
    }

    /// What is asked: to set a factor or to verify one.
    public var kind: Kind
    /// The factors the person may use now: the one required to set, or those allowed to verify.
    public var factors: [SecondFactorType]
    /// What went wrong with the last input, asked again.
    public var problem: SecondFactorProblem?

    /// Asks for `kind` with `factors`; `problem` says what was wrong with the last input.
    public init(kind: Kind, factors: [SecondFactorType], problem: SecondFactorProblem? = nil) {
        (self.kind, self.factors, self.problem) = (kind, factors, problem)
    }
}

/// Why an input of a device second-factor flow was refused: states, never thrown strings.
public enum SecondFactorProblem: Sendable, Equatable {
    /// The PIN is wrong; so many tries are left before it is blocked.
    case wrongPIN(attemptsRemaining: Int?)
    /// Three wrong PINs in a row: the PIN is blocked (seed 001's "Blocked PIN").
    case pinBlocked
    /// The PIN is among the most common ones: choose another.
    case commonPIN
    /// The PIN and its confirmation differ.
    case pinsDiffer
    /// The PIN is not complete.
    case incompletePIN
    /// The phone refused the biometric prompt (cancelled, locked out, key invalidated, …).
    case device(DeviceAuthFailure)
    /// The server could not be reached.
    case offline
    /// Another refusal, with the server's code and words.
    case refused(ErrorCode?, String)
    /// The person cancelled the flow (seed 001's `sfCancel`), or declined the biometric prompt
    /// while adding biometrics: nothing changed.
    case cancelled
}

/// A state of a device second-factor flow (seed 001's `FlowUpdate`): waiting for input,
/// processing, done, or over with a problem.
public enum SecondFactorFlowState: Sendable, Equatable {
    /// Waiting for the person's input, as the interaction describes it.
    case waitForInput(SecondFactorInteraction)
    /// A request is on its way.
    case processing
    /// Finished: the device's second factors as the server now has them.
    case done(DeviceSecondFactorResponse)
    /// Over without finishing (the PIN blocked, the device unknown, …).
    case failed(SecondFactorProblem)
}

/// Seed 001's four flows on an enrolled device, each a sequence of states the app renders:
///
/// - `setPIN`: set the first PIN (asked twice, common PINs refused) → processing → done.
/// - `addBiometrics`: verify the PIN → processing → set biometrics (the prompt makes a key
///   behind biometrics) → processing → done.
/// - `addBiometricsBiometricFirst`: seed 001's `legacyBioAddFlow`, the same in the older order:
///   set biometrics (the prompt) → verify the PIN → processing → done.
///
/// Declining the biometric prompt while adding biometrics, or `cancel()` at any step, ends the
/// flow with `.failed(.cancelled)` and changes nothing.
/// - `removeBiometrics`: verify with the PIN or biometrics → processing → done.
/// - `changePIN`: verify with the PIN or biometrics → processing → set the new PIN → processing
///   → done.
///
/// PINs are `PIN` containers, wiped once sent. The biometric key lives in the phone's key store
/// (`DeviceSecurity`) under `biometricKeyTag`.
public actor DeviceSecondFactorFlow {
    /// Which of seed 001's four flows it runs.
    public enum Kind: Sendable, Equatable {
        /// Set the first PIN, add biometrics, remove biometrics, or change the PIN.
        case setPIN, addBiometrics, removeBiometrics, changePIN
        /// Add biometrics with the biometric prompt first and the PIN after (`legacyBioAddFlow`).
        case addBiometricsBiometricFirst
    }

    /// The flow this runs.
    public nonisolated let kind: Kind
    private let session: SessionManager
    private let device: any DeviceSecurity
    private let deviceID: String
    private let biometricKeyTag: String
    /// The PIN verified in the first step, for the second (adding biometrics, changing the PIN).
    private var verifiedPIN: PIN?
    /// The factor that proved the person in the first step of `changePIN`.
    private var verifiedWith: SecondFactorType?
    /// The biometric key's public half made first, waiting for the PIN
    /// (`addBiometricsBiometricFirst`).
    private var madeKey: Data?
    private let watchers = StateWatchers<SecondFactorFlowState>(buffer: 16, initial: .processing)

    /// The flow's state now; `processing` until `start()` asks for the first input.
    public private(set) var state: SecondFactorFlowState = .processing

    /// A `kind` flow for the enrolled device `deviceID` on `session`, its biometric key kept in `device` under
    /// `biometricKeyTag`.
    public init(
        _ kind: Kind, session: SessionManager, device: any DeviceSecurity, deviceID: String, biometricKeyTag: String
    ) {
        (self.kind, self.session, self.device, self.deviceID, self.biometricKeyTag) =
            (kind, session, device, deviceID, biometricKeyTag)
    }

    /// The state now, then each change.
    public func states() -> AsyncStream<SecondFactorFlowState> { watchers.stream(starting: state) }

    @discardableResult
    private func enter(_ new: SecondFactorFlowState) -> SecondFactorFlowState {
        state = new
        watchers.yield(new)
        return new
    }

    private var client: APIClient { session.client }

    // MARK: Intents

    /// Reads the device's second factors and asks for the first input.
    @discardableResult
    public func start() async -> SecondFactorFlowState {
        enter(.processing)
        let status: DeviceSecondFactorResponse
        do {
            status = try await client.send(API.DeviceFactors.status, deviceID, bearer: try await session.accessToken())
        } catch {
            return enter(.failed(Self.problem(error)))
        }
        if status.pinBlocked, kind != .setPIN { return enter(.failed(.pinBlocked)) }
        if status.hasBiometrics, kind == .addBiometrics || kind == .addBiometricsBiometricFirst {
            return enter(.failed(.refused(nil, "This device has biometrics already. Remove them to add them again.")))
        }
        switch kind {
        case .setPIN:
            return enter(.waitForInput(SecondFactorInteraction(kind: .setSecondFactor, factors: [.pin])))
        case .addBiometrics:
            return enter(.waitForInput(SecondFactorInteraction(kind: .verifySecondFactor, factors: [.pin])))
        case .addBiometricsBiometricFirst:
            return enter(.waitForInput(SecondFactorInteraction(kind: .setSecondFactor, factors: [.biometrics])))
        case .removeBiometrics, .changePIN:
            let allowed: [SecondFactorType] = status.hasBiometrics ? [.pin, .biometrics] : [.pin]
            return enter(.waitForInput(SecondFactorInteraction(kind: .verifySecondFactor, factors: allowed)))
        }
    }

    /// The PIN asked for now: to verify (once), or to set (`confirmation` is the same PIN typed
    /// again). The containers are wiped when this returns.
    @discardableResult
    public func enter(pin: sending PIN, confirmation: sending PIN? = nil) async -> SecondFactorFlowState {
        defer {
            if verifiedPIN !== pin { pin.reset() }
            confirmation?.reset()
        }
        guard case .waitForInput(let interaction) = state, interaction.factors.contains(.pin) else { return state }
        guard pin.isComplete else { return ask(interaction, .incompletePIN) }
        switch interaction.kind {
        case .setSecondFactor:
            guard let confirmation, confirmation == pin else { return ask(interaction, .pinsDiffer) }
            guard !pin.isCommon else { return ask(interaction, .commonPIN) }
            return await setPIN(pin, interaction: interaction)
        case .verifySecondFactor:
            return await verify(pin, interaction: interaction)
        }
    }

    /// The biometric prompt asked for now: to make the key (setting biometrics), or to sign the
    /// server's challenge (verifying).
    @discardableResult
    public func useBiometrics() async -> SecondFactorFlowState {
        guard case .waitForInput(let interaction) = state, interaction.factors.contains(.biometrics) else {
            return state
        }
        enter(.processing)
        do {
            switch interaction.kind {
            case .setSecondFactor:
                let pin = verifiedPIN
                guard pin != nil || kind == .addBiometricsBiometricFirst else { return enter(.failed(.incompletePIN)) }
                // The new key waits under a tag of its own: a key already under `biometricKeyTag`
                // stays until the server has taken the new one.
                let key: Data
                do {
                    key = try await device.createKey(tag: pendingKeyTag, protection: .biometric)
                    _ = try await device.sign(Data("twofold biometrics test".utf8), tag: pendingKeyTag)
                } catch {
                    await device.deleteKey(tag: pendingKeyTag)
                    // A declined prompt is the person saying no to biometrics: the add ends.
                    if error == .userCancel { return await end() }
                    return ask(interaction, .device(error))
                }
                guard let pin else {
                    // The older order: the key first, then the PIN that lets the server take it.
                    madeKey = key
                    return enter(.waitForInput(SecondFactorInteraction(kind: .verifySecondFactor, factors: [.pin])))
                }
                let status: DeviceSecondFactorResponse
                do {
                    status = try await client.send(
                        API.DeviceFactors.addBiometrics, deviceID,
                        DeviceBiometricsAddRequest(publicKey: key.base64EncodedString(), pin: Self.digits(pin)),
                        bearer: try await session.accessToken())
                } catch {
                    await device.deleteKey(tag: pendingKeyTag)
                    throw error
                }
                await device.replaceKey(tag: biometricKeyTag, with: pendingKeyTag)
                return finish(status)
            case .verifySecondFactor:
                let signature: BiometricSignature
                do {
                    signature = try await biometricSignature()
                } catch let failure as DeviceAuthFailure {
                    return ask(interaction, .device(failure))
                }
                if kind == .removeBiometrics {
                    let status = try await client.send(
                        API.DeviceFactors.removeBiometrics, deviceID, DeviceFactorProof(biometric: signature),
                        bearer: try await session.accessToken())
                    await device.deleteKey(tag: biometricKeyTag)
                    return finish(status)
                }
                _ = try await client.send(
                    API.DeviceFactors.verifyBiometrics, deviceID, signature, bearer: try await session.accessToken())
                verifiedWith = .biometrics
                return enter(.waitForInput(SecondFactorInteraction(kind: .setSecondFactor, factors: [.pin])))
            }
        } catch {
            return refused(interaction, error)
        }
    }

    // MARK: Steps

    private func setPIN(_ pin: PIN, interaction: SecondFactorInteraction) async -> SecondFactorFlowState {
        enter(.processing)
        do {
            var request = DevicePINChangeRequest(newPin: Self.digits(pin))
            if kind == .changePIN {
                if verifiedWith == .biometrics {
                    request.biometric = try await biometricSignature()
                } else if let old = verifiedPIN {
                    request.pin = Self.digits(old)
                }
            }
            let status = try await client.send(
                API.DeviceFactors.setPIN, deviceID, request, bearer: try await session.accessToken())
            return finish(status)
        } catch let failure as DeviceAuthFailure {
            return ask(interaction, .device(failure))
        } catch {
            return refused(interaction, error)
        }
    }

    private func verify(_ pin: PIN, interaction: SecondFactorInteraction) async -> SecondFactorFlowState {
        enter(.processing)
        do {
            if kind == .addBiometricsBiometricFirst, let key = madeKey {
                let status = try await client.send(
                    API.DeviceFactors.addBiometrics, deviceID,
                    DeviceBiometricsAddRequest(publicKey: key.base64EncodedString(), pin: Self.digits(pin)),
                    bearer: try await session.accessToken())
                madeKey = nil
                await device.replaceKey(tag: biometricKeyTag, with: pendingKeyTag)
                return finish(status)
            }
            if kind == .removeBiometrics {
                let status = try await client.send(
                    API.DeviceFactors.removeBiometrics, deviceID, DeviceFactorProof(pin: Self.digits(pin)),
                    bearer: try await session.accessToken())
                await device.deleteKey(tag: biometricKeyTag)
                return finish(status)
            }
            _ = try await client.send(
                API.DeviceFactors.verifyPIN, deviceID, DevicePINRequest(pin: Self.digits(pin)),
                bearer: try await session.accessToken())
            verifiedPIN = pin
            verifiedWith = .pin
            let next: SecondFactorType = kind == .addBiometrics ? .biometrics : .pin
            return enter(.waitForInput(SecondFactorInteraction(kind: .setSecondFactor, factors: [next])))
        } catch {
            if madeKey != nil, Self.problem(error) == .pinBlocked {
                // The server will not take the key made first: the phone does not keep it either.
                await device.deleteKey(tag: pendingKeyTag)
                madeKey = nil
            }
            return refused(interaction, error)
        }
    }

    /// The server's challenge signed behind the biometric prompt.
    private func biometricSignature() async throws -> BiometricSignature {
        let challenge = try await client.send(
            API.DeviceFactors.biometricChallenge, deviceID, bearer: try await session.accessToken())
        guard let bytes = Data(base64Encoded: challenge.challenge) else {
            throw UnreadableAnswer(endpoint: "biometric challenge", status: 200, reason: "not base64")
        }
        let signature = try await device.sign(bytes, tag: biometricKeyTag)
        return BiometricSignature(challengeId: challenge.challengeId, signature: signature.base64EncodedString())
    }

    /// Seed 001's `sfCancel`: ends the flow wherever it is, with nothing changed (a PIN kept
    /// between steps wiped, a biometric key made and not yet taken by the server deleted).
    /// Only between steps: while a request or a prompt is out (`processing`), it changes nothing
    /// and the flow goes on, so a change the server makes is never reported as cancelled.
    @discardableResult
    public func cancel() async -> SecondFactorFlowState {
        guard case .waitForInput = state else { return state }
        return await end()
    }

    private func end() async -> SecondFactorFlowState {
        verifiedPIN?.reset()
        (verifiedPIN, madeKey) = (nil, nil)
        // Set before the await: a second cancel while the key is deleted finds the flow over.
        enter(.failed(.cancelled))
        await device.deleteKey(tag: pendingKeyTag)
        return state
    }

    /// Where a new biometric key waits until the server has taken it.
    private var pendingKeyTag: String { biometricKeyTag + ".pending" }

    private func finish(_ status: DeviceSecondFactorResponse) -> SecondFactorFlowState {
        verifiedPIN?.reset()
        verifiedPIN = nil
        return enter(.done(status))
    }

    /// The same input asked for again, saying what was wrong.
    private func ask(_ interaction: SecondFactorInteraction, _ problem: SecondFactorProblem) -> SecondFactorFlowState {
        var interaction = interaction
        interaction.problem = problem
        return enter(.waitForInput(interaction))
    }

    /// A refusal by the server: a blocked PIN ends the flow; a wrong or common PIN asks again.
    private func refused(_ interaction: SecondFactorInteraction, _ error: any Error) -> SecondFactorFlowState {
        let problem = Self.problem(error)
        if problem == .pinBlocked {
            verifiedPIN?.reset()
            verifiedPIN = nil
            return enter(.failed(.pinBlocked))
        }
        return ask(interaction, problem)
    }

    /// What `error` means to the person.
    static func problem(_ error: any Error) -> SecondFactorProblem {
        if let failure = error as? DeviceAuthFailure { return .device(failure) }
        guard let error = error as? APIError else { return .offline }
        guard let problem = error.problem else {
            return error.status >= 500 ? .offline : .refused(nil, "HTTP \(error.status)")
        }
        switch problem.code {
        case .pinBlocked: return .pinBlocked
        case .invalidCode, .invalidCredentials: return .wrongPIN(attemptsRemaining: problem.attemptsRemaining)
        case .validationFailed where problem.errors?["newPin"] != nil: return .commonPIN
        case .serviceUnavailable: return .offline
        default: return .refused(problem.code, problem.detail ?? problem.title)
        }
    }

    /// The PIN's digits as the wire carries them, made only for the request that sends them.
    private static func digits(_ pin: PIN) -> String {
        pin.withDigits { String(decoding: $0.map { $0 + UInt8(ascii: "0") }, as: UTF8.self) }
    }
}

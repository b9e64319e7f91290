import Foundation
import Observation
import TwofoldAPI
import TwofoldClient
import TwofoldCore

/// Seed 001's PIN pad and its flows on screen (`DeviceSecondFactorFlow`): set the PIN (typed
/// twice), change it, verify it, add biometrics after the PIN or — the older order,
/// `legacyBioAddFlow` — before it, and remove them; "Use Face ID" where the flow allows it; and
/// Cancel (`sfCancel`), which ends the flow with nothing changed. The digits are pressed on the
/// app's own pad (no system keyboard: no keyboard cache, no suggestions), kept in a `PIN` that
/// is wiped once sent, and shown only as dots: this model tells the screen how many, never
/// which. No key gives a sound or a haptic (someone watching or listening learns nothing),
/// and the view hides the pad from screenshots and the app switcher.
@MainActor @Observable
public final class PINPadModel {
    /// Where the flow stands on screen.
    public enum Phase: Sendable, Equatable {
        /// Reading the device's factors.
        case starting
        /// The pad, asking for `prompt`; `offersBiometrics` adds the biometric button.
        case pad
        /// The biometric prompt is what the flow asks for (adding biometrics): one button.
        case biometrics
        /// A request or a prompt is out.
        case working
        /// Done: the device's second factors as the server now has them.
        case done(DeviceSecondFactorResponse)
        /// Over without finishing, in words (cancelled, the PIN blocked, …).
        case over(String)
    }

    /// How many digits a PIN has here.
    public let length: Int
    /// Where the flow stands.
    public private(set) var phase: Phase = .starting
    /// What the pad asks for now ("Enter your PIN", "Choose a new PIN", "Enter it again").
    public private(set) var prompt = ""
    /// What was wrong with the last input, in words.
    public private(set) var problem: String?
    /// Whether the biometric prompt may answer instead of the PIN now.
    public private(set) var offersBiometrics = false
    /// How many digits are in: the dots. The digits themselves are not readable here.
    public private(set) var entered = 0
    private var pin: PIN
    /// A new PIN typed once, waiting for the same digits again.
    private var firstEntry: PIN?
    private var interaction: SecondFactorInteraction?
    private let flow: DeviceSecondFactorFlow

    /// The pad for `flow`, with PINs of `length` digits (4 to 16; the server refuses others).
    public init(flow: DeviceSecondFactorFlow, length: Int = 6) {
        (self.flow, self.length) = (flow, length)
        pin = PIN(requiredLength: length)
    }

    /// What the screen's title says.
    public var title: String {
        switch flow.kind {
        case .setPIN: "Set a PIN"
        case .changePIN: "Change your PIN"
        case .addBiometrics, .addBiometricsBiometricFirst: "Add Biometrics"
        case .removeBiometrics: "Remove Biometrics"
        }
    }

    // MARK: Intents

    /// Reads the device's factors and asks for the first input.
    public func start() async {
        phase = .starting
        show(await flow.start())
    }

    /// A digit pressed; the last one sends the PIN (or asks for it again, when it is a new one).
    public func press(_ digit: Int) async {
        guard phase == .pad, (0...9).contains(digit), pin.pushDigit(digit) else { return }
        entered = pin.count
        if pin.isComplete { await submit() }
    }

    /// The delete key.
    public func deleteDigit() {
        guard phase == .pad else { return }
        pin.popDigit()
        entered = pin.count
    }

    /// The biometric button (or the only button, when the flow asks for the prompt).
    public func useBiometrics() async {
        guard phase == .biometrics || (phase == .pad && offersBiometrics) else { return }
        clearEntry()
        phase = .working
        show(await flow.useBiometrics())
    }

    /// Cancel: the flow ends, nothing changed.
    public func cancel() async {
        clearEntry()
        show(await flow.cancel())
    }

    // MARK: Steps

    private func submit() async {
        guard let interaction else { return }
        let typed = Self.handOff(pin)
        entered = 0
        if interaction.kind == .setSecondFactor {
            guard let first = firstEntry else {
                // A new PIN is typed twice: the pad asks for it again.
                firstEntry = typed
                (prompt, problem) = ("Enter the new PIN again", nil)
                return
            }
            firstEntry = nil
            phase = .working
            let confirmation = Self.handOff(first)
            show(await flow.enter(pin: Self.handOff(typed), confirmation: confirmation))
        } else {
            phase = .working
            show(await flow.enter(pin: Self.handOff(typed)))
        }
    }

    /// A new `PIN` with `pin`'s digits, which is wiped: what goes to the flow is a value of its
    /// own, as the flow's `sending` parameter asks.
    private nonisolated static func handOff(_ pin: PIN) -> sending PIN {
        let copy = PIN(requiredLength: pin.requiredLength)
        // One digit at a time, so that the copy shares nothing with the PIN it came from.
        for index in 0..<pin.count {
            _ = copy.pushDigit(pin.withDigits { Int($0[index]) })
        }
        pin.reset()
        return copy
    }

    private func clearEntry() {
        pin.reset()
        firstEntry?.reset()
        firstEntry = nil
        entered = 0
    }

    private func show(_ state: SecondFactorFlowState) {
        switch state {
        case .processing:
            phase = .working
        case .waitForInput(let asked):
            interaction = asked
            problem = asked.problem.map(Self.words)
            if asked.problem != nil { clearEntry() }
            if asked.factors == [.biometrics] {
                phase = .biometrics
                prompt = "Confirm with your face or fingerprint to add biometrics."
                offersBiometrics = true
            } else {
                phase = .pad
                offersBiometrics = asked.factors.contains(.biometrics)
                prompt =
                    switch (asked.kind, flow.kind) {
                    case (.setSecondFactor, .setPIN): "Choose a PIN of \(length) digits"
                    case (.setSecondFactor, _): "Choose a new PIN of \(length) digits"
                    case (.verifySecondFactor, _): "Enter your PIN"
                    }
            }
        case .done(let status):
            clearEntry()
            phase = .done(status)
            problem = nil
        case .failed(let why):
            clearEntry()
            phase = .over(Self.words(why))
            problem = nil
        }
    }

    /// A problem in the words the pad shows.
    static func words(_ problem: SecondFactorProblem) -> String {
        switch problem {
        case .wrongPIN(let left?) where left == 1: "That PIN is wrong. 1 try left before it is blocked."
        case .wrongPIN(let left?): "That PIN is wrong. \(left) tries left before it is blocked."
        case .wrongPIN(nil): "That PIN is wrong."
        case .pinBlocked: "Your PIN is blocked after too many wrong tries. Set a new PIN to use one again."
        case .commonPIN: "That PIN is too easy to guess. Choose another."
        case .pinsDiffer: "The two PINs differ. Choose a PIN and enter it twice."
        case .incompletePIN: "Enter every digit of the PIN."
        case .device(let failure): "\(failure.message)."
        case .offline: "The server can't be reached. Check your connection and try again."
        case .refused(_, let words): words
        case .cancelled: "Cancelled. Nothing was changed."
        }
    }
}

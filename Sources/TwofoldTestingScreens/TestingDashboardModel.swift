import Foundation
import Observation
import TwofoldAPI
import TwofoldClient
import TwofoldDevice
import TwofoldScenarios
import TwofoldScreens

/// Seed 004's testing dashboard: the device's status, the test actions, seed 004's ten scenarios
/// and the timestamped results log with LocalAuthentication's error codes. On a virtual phone
/// it also has the phone's switches (secure hardware, biometry and its kind, passcode, the next
/// prompt declined, biometrics locked out), so every flow can be tried by hand. The iOS app's
/// dashboard and `twofold dashboard`'s page both render this model.
@MainActor @Observable
public final class TestingDashboardModel {
    /// One line of the results log.
    public struct LogEntry: Codable, Sendable, Equatable, Identifiable {
        /// Its place in the log.
        public let id: Int
        /// When it happened.
        public let at: Date
        /// What logged it: `action`, or `scenario N`.
        public let source: String
        /// What was done.
        public let action: String
        /// What came of it.
        public let outcome: String
        /// The phone's LocalAuthentication error, code and seed 004's words, when it gave one.
        public let reason: String?
        /// Whether it records a failure.
        public var failed: Bool { outcome.hasPrefix("FAILED") }
    }

    /// The test actions, in seed 004's order.
    public enum Action: String, CaseIterable, Codable, Sendable {
        case enrollBiometric, enrollPasscode, testAuthentication, reEnroll, unenroll, simulateBiometricDecline,
            switchToSMSFallback, checkDeviceSecurity

        /// The button's title, as the seed names it.
        public var title: String {
            switch self {
            case .enrollBiometric: "Enroll with Biometrics"
            case .enrollPasscode: "Enroll with Passcode Only"
            case .testAuthentication: "Test Authentication"
            case .reEnroll: "Re-enroll"
            case .unenroll: "Unenroll"
            case .simulateBiometricDecline: "Simulate Biometric Decline"
            case .switchToSMSFallback: "Switch to SMS Fallback"
            case .checkDeviceSecurity: "Check Device Security Status"
            }
        }
    }

    /// A switch of the virtual phone.
    public enum Switch: Codable, Sendable, Equatable {
        /// Secure hardware (a Secure Enclave) present.
        case secureHardware(Bool)
        /// The kind of biometry.
        case biometry(Biometry)
        /// A face or finger enrolled.
        case biometryEnrolled(Bool)
        /// A passcode set; off removes every key, as iOS does.
        case passcode(Bool)
        /// Biometrics locked out.
        case lockout(Bool)
        /// The next prompt declined.
        case cancelNextPrompt

        /// A switch by its name and value as a page's form sends them (`passcode` and `true`,
        /// `biometry` and `touchID`); `nil` for an unknown name or value.
        public init?(name: String, value: String) {
            let on = value == "true"
            guard on || value == "false" || name == "biometry" || name == "cancelNextPrompt" else { return nil }
            switch name {
            case "secureHardware": self = .secureHardware(on)
            case "biometry":
                guard let kind = Biometry(rawValue: value) else { return nil }
                self = .biometry(kind)
            case "biometryEnrolled": self = .biometryEnrolled(on)
            case "passcode": self = .passcode(on)
            case "lockout": self = .lockout(on)
            case "cancelNextPrompt": self = .cancelNextPrompt
            default: return nil
            }
        }
    }

    /// The virtual phone's switches as they stand.
    public struct Switches: Codable, Sendable, Equatable {
        /// The phone's security.
        public var capabilities: DeviceCapabilities
        /// Biometrics locked out.
        public var lockedOut: Bool
        /// The next prompt will be declined.
        public var cancelsNextPrompt: Bool
    }

    /// A scenario as the dashboard lists it.
    public struct ScenarioRow: Codable, Sendable, Equatable {
        /// Its number in seed 004.
        public let number: Int
        /// Its name in seed 004.
        public let name: String
        /// `running`, `passed`, `failed`, or `nil` before it ran.
        public var result: String?
    }

    /// Everything the dashboard shows, for a page to render.
    public struct Snapshot: Codable, Sendable, Equatable {
        public var status: DeviceTestBench.Status?
        public var switches: Switches?
        public var scenarioPhone: DeviceCapabilities?
        public var scenarioPhoneOf: Int?
        public var actions: [String: String]
        public var scenarios: [ScenarioRow]
        public var running: String?
        public var awaitingCode: String?
        public var log: [LogEntry]
    }

    /// The device's status, as last read.
    public private(set) var status: DeviceTestBench.Status?
    /// The virtual phone's switches, as last read (`nil` on a real phone).
    public private(set) var switches: Switches?
    /// The scenarios and how each last ran.
    public private(set) var scenarios: [ScenarioRow]
    /// The phone the running (or last) scenario set up, and its number.
    public private(set) var scenarioPhone: (number: Int, capabilities: DeviceCapabilities)?
    /// What runs now (an action's title, or a scenario's name).
    public private(set) var running: String?
    /// A code is awaited for this (masked) number: type it into `submitCode(_:)`.
    public private(set) var awaitingCode: String?
    /// The results log, oldest first: the newest `logLimit` entries.
    public private(set) var log: [LogEntry] = []
    /// How many entries the log keeps (older ones are dropped, so a long session stays small).
    public static let logLimit = 1000
    private var nextLogID = 0

    private let bench: DeviceTestBench
    private let phone: VirtualPhone?
    private let runner: ScenarioRunner
    private let inbox: DashboardInbox
    private var phones: [Int: VirtualPhone] = [:]
    /// The work running now, to stop.
    private var current: Task<Void, Never>?
    private let sink: LogSink

    /// A dashboard against `client`'s server on `device`, known to the server as `deviceID`. Pass
    /// the `VirtualPhone` as `device` for its switches. Codes come from `codes` (the SMS webhook)
    /// when given, else from the code field, typed within `codeWait` (a code's lifetime).
    public init(
        client: APIClient, device: any DeviceSecurity, deviceID: String, codes: (any CodeInbox)? = nil,
        origin: String? = nil, codeWait: Duration = .seconds(600)
    ) {
        let inbox = DashboardInbox(fallback: codes, wait: codeWait)
        self.inbox = inbox
        phone = device as? VirtualPhone
        // Seed 004's ten, and approval on the phone (13), which runs on the same device key.
        scenarios = ScenarioRunner.catalogue.filter { $0.number <= 10 || $0.number == 13 }.map {
            ScenarioRow(number: $0.number, name: $0.name, result: nil)
        }
        let sink = LogSink()
        self.sink = sink
        bench = DeviceTestBench(client: client, device: device, deviceID: deviceID, inbox: inbox) { step in
            sink.deliver("action", step)
        }
        runner = ScenarioRunner(client: client, inbox: inbox, origin: origin, onPhone: { sink.phone($0, $1) })
        sink.model = self
        inbox.model = self
    }

    // MARK: Intents

    /// Reads the device's status and the switches.
    public func refresh() async {
        status = await bench.status()
        if let phone {
            switches = Switches(
                capabilities: await phone.state, lockedOut: await phone.biometryLockedOut,
                cancelsNextPrompt: await phone.cancelsNextPrompt)
        }
        if let last = phones.max(by: { $0.key < $1.key }) {
            scenarioPhone = (last.key, await last.value.state)
        }
    }

    /// What the dashboard can be asked to run.
    public enum Work: Sendable, Equatable {
        /// A test action.
        case action(Action)
        /// One of seed 004's scenarios, by number.
        case scenario(Int)
        /// The ten scenarios, one after another.
        case allScenarios

        var title: String {
            switch self {
            case .action(let action): action.title
            case .scenario(let number): "Scenario \(number)"
            case .allScenarios: "Every scenario"
            }
        }
    }

    /// Runs `work` and waits for it; nothing when something else runs.
    public func run(_ work: Work) async {
        guard start(work), let task = current else { return }
        await task.value
    }

    /// Starts `work` in the background (a page's button); `false` when something else runs.
    @discardableResult
    public func start(_ work: Work) -> Bool {
        guard running == nil else { return false }
        running = work.title
        current = Task {
            await execute(work)
            let stopped = Task.isCancelled
            if stopped {
                append(
                    "dashboard", action: work.title, outcome: "FAILED: stopped", reason: "stopped from the dashboard")
            }
            // Ready before the status is read again: a stop is never held up by the requests
            // that read it, and that reading runs outside the stopped work (not cancelled).
            (running, awaitingCode, current) = (nil, nil, nil)
            if stopped {
                await Task { await self.refresh() }.value
            } else {
                await refresh()
            }
        }
        return true
    }

    /// Stops what runs (one waiting for a code nobody will type, say): the step under way fails
    /// as cancelled, no further scenario starts, and the log says it was stopped.
    public func stop() {
        current?.cancel()
    }

    private func execute(_ work: Work) async {
        switch work {
        case .action(let action): await perform(action)
        case .scenario(let number): await runScenario(number)
        case .allScenarios:
            for row in scenarios where !Task.isCancelled { await runScenario(row.number) }
        }
        drain()
    }

    private func perform(_ action: Action) async {
        switch action {
        case .enrollBiometric: await bench.enroll(.biometric)
        case .enrollPasscode: await bench.enroll(.passcode)
        case .testAuthentication: await bench.testAuthentication()
        case .reEnroll: await bench.reEnroll()
        case .unenroll: await bench.unenroll()
        case .simulateBiometricDecline: await bench.simulateBiometricDecline()
        case .switchToSMSFallback: await bench.switchToSMSFallback()
        case .checkDeviceSecurity: await bench.checkDeviceSecurity()
        }
    }

    /// Flips a switch of the virtual phone (nothing on a real phone).
    public func flip(_ change: Switch) async {
        guard let phone else { return }
        var state = await phone.state
        switch change {
        case .secureHardware(let on): state.secureHardware = on
        case .biometry(let kind):
            state.biometry = kind
            if kind == .none { state.biometryEnrolled = false }
        case .biometryEnrolled(let on):
            state.biometryEnrolled = on && state.biometry != .none && state.passcodeSet
        case .passcode(let on):
            if on {
                state.passcodeSet = true
            } else {
                await phone.removeSecurity()
                state = await phone.state
            }
        case .lockout(let on): await phone.lockOutBiometry(on)
        case .cancelNextPrompt: await phone.cancelNextPrompt()
        }
        await phone.set(state)
        append("switch", action: "set the phone", outcome: Self.words(change), reason: nil)
        await refresh()
    }

    private func runScenario(_ number: Int) async {
        guard let index = scenarios.firstIndex(where: { $0.number == number }) else { return }
        scenarios[index].result = "running"
        let results = await runner.run(only: number)
        scenarios[index].result = results.first?.passed == true ? "passed" : "failed"
        for step in results.first?.steps ?? [] {
            append("scenario \(number)", action: step.action, outcome: step.outcome, reason: step.reason, at: step.at)
        }
        append(
            "scenario \(number)", action: "scenario \(number): \(scenarios[index].name)",
            outcome: results.first?.passed == true ? "PASSED" : "FAILED: see the steps above", reason: nil)
    }

    /// The code a scenario or action waits for, as the person read it.
    public func submitCode(_ code: String) async {
        awaitingCode = nil
        await inbox.provide(code.filter { $0.isNumber })
    }

    /// Everything the dashboard shows, for a page.
    public var snapshot: Snapshot {
        Snapshot(
            status: status, switches: switches, scenarioPhone: scenarioPhone?.capabilities,
            scenarioPhoneOf: scenarioPhone?.number,
            actions: Dictionary(uniqueKeysWithValues: Action.allCases.map { ($0.rawValue, $0.title) }),
            scenarios: scenarios, running: running, awaitingCode: awaitingCode, log: log)
    }

    // MARK: Log

    fileprivate func append(_ source: String, action: String, outcome: String, reason: String?, at: Date = Date()) {
        log.append(LogEntry(id: nextLogID, at: at, source: source, action: action, outcome: outcome, reason: reason))
        nextLogID += 1
        if log.count > Self.logLimit { log.removeFirst(log.count - Self.logLimit) }
    }

    /// Moves the steps the bench logged into the log.
    fileprivate func drain() {
        for (source, step) in sink.take() {
            append(source, action: step.action, outcome: step.outcome, reason: step.reason, at: step.at)
        }
    }

    fileprivate func scenarioSetUp(_ number: Int, _ phone: VirtualPhone) async {
        phones[number] = phone
        let state = await phone.state
        scenarioPhone = (number, state)
        append(
            "scenario \(number)", action: "set the phone as the seed describes",
            outcome: "biometry \(state.biometry.rawValue) \(state.biometryEnrolled ? "enrolled" : "not enrolled"), "
                + "passcode \(state.passcodeSet ? "set" : "not set")", reason: nil)
    }

    fileprivate func waiting(for destination: String?) { awaitingCode = destination }

    static func words(_ change: Switch) -> String {
        switch change {
        case .secureHardware(let on): on ? "Secure Enclave present" : "no Secure Enclave: keys in the Keychain"
        case .biometry(let kind): "biometry: \(kind.name)"
        case .biometryEnrolled(let on): on ? "biometrics enrolled" : "no biometrics enrolled"
        case .passcode(let on): on ? "passcode set" : "passcode removed: every key is gone"
        case .lockout(let on): on ? "biometrics locked out" : "biometrics unlocked"
        case .cancelNextPrompt: "the next prompt will be declined"
        }
    }
}

/// Hands steps and phones from the bench and the runner (any thread) to the model, in the
/// order they were logged: the model drains them as they come and when an action ends.
private final class LogSink: @unchecked Sendable {
    // Safe: `model` is set once, before any step can arrive, and only touched on the main
    // actor; `pending` is read and written under `lock` only.
    weak var model: TestingDashboardModel?
    private let lock = NSLock()
    private var pending: [(source: String, step: ScenarioStep)] = []

    func deliver(_ source: String, _ step: ScenarioStep) {
        lock.withLock { pending.append((source, step)) }
        Task { @MainActor [weak model] in model?.drain() }
    }

    func take() -> [(source: String, step: ScenarioStep)] {
        lock.withLock {
            defer { pending = [] }
            return pending
        }
    }

    func phone(_ number: Int, _ phone: VirtualPhone) {
        Task { @MainActor [weak model] in await model?.scenarioSetUp(number, phone) }
    }
}

/// A code was asked for again before the first was typed: the first wait ends.
struct CodeSuperseded: Error, CustomStringConvertible {
    var description: String { "another code was asked for before this one was typed" }
}

/// Nobody typed the code a step waited for in time.
struct CodeWaitTimedOut: Error, CustomStringConvertible {
    var description: String { "no code was typed in time (a code lives 10 minutes)" }
}

/// Where the dashboard's scenarios and actions read codes: the SMS webhook when there is one,
/// else the person types the code the server's console (or their phone) shows, within `wait`
/// (a sent code's lifetime: after it, the code could not work anyway).
final class DashboardInbox: CodeInbox, @unchecked Sendable {
    // Safe: `model` is set once before use; `pending` and `waits` are read and written under
    // `lock` only.
    weak var model: TestingDashboardModel?
    private let fallback: (any CodeInbox)?
    private let wait: Duration
    private let lock = NSLock()
    private var pending: (id: Int, continuation: CheckedContinuation<String, any Error>)?
    private var waits = 0

    init(fallback: (any CodeInbox)?, wait: Duration = .seconds(600)) { (self.fallback, self.wait) = (fallback, wait) }

    /// Ends the wait `id` (any wait when `nil`) with `error`, if it is still the one waiting.
    private func end(_ id: Int?, with error: any Error) {
        lock.withLock { () -> CheckedContinuation<String, any Error>? in
            guard let waiting = pending, id == nil || waiting.id == id else { return nil }
            pending = nil
            return waiting.continuation
        }?.resume(throwing: error)
    }

    func code(to destination: String, sentBy trigger: @Sendable () async throws -> Void) async throws -> String {
        if let fallback { return try await fallback.code(to: destination, sentBy: trigger) }
        try await trigger()
        let masked = PhoneMask.masked(destination)
        // The wait is in place before the field is shown: a code typed the moment it appears
        // always finds it. The field goes when the code is given (`provide`).
        // A cancelled run (the app leaving the dashboard, a test's time limit) stops waiting.
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let (id, earlier) = lock.withLock {
                    waits += 1
                    defer { pending = (waits, continuation) }
                    return (waits, pending?.continuation)
                }
                earlier?.resume(throwing: CodeSuperseded())
                Task { @MainActor [weak model] in model?.waiting(for: masked) }
                Task { [weak self, wait] in
                    try? await Task.sleep(for: wait)
                    self?.end(id, with: CodeWaitTimedOut())
                }
            }
        } onCancel: {
            end(nil, with: CancellationError())
        }
    }

    func provide(_ code: String) async {
        let waiting = lock.withLock {
            defer { pending = nil }
            return pending
        }
        waiting?.continuation.resume(returning: code)
    }
}

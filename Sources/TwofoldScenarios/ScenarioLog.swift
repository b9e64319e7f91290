import Foundation

/// One step of a scenario as its log shows it: when, what was done, what came of it, and the
/// phone's LocalAuthentication-like reason when it gave one.
public struct ScenarioStep: Codable, Sendable, Equatable {
    /// When the step was recorded.
    public var at: Date
    /// What was done.
    public var action: String
    /// What came of it (`FAILED: …` when a check did not hold).
    public var outcome: String
    /// The phone's reason, when it gave one.
    public var reason: String?

    /// A step at `at`: the `action`, its `outcome`, and the phone's `reason` if any.
    public init(at: Date, action: String, outcome: String, reason: String? = nil) {
        (self.at, self.action, self.outcome, self.reason) = (at, action, outcome, reason)
    }
}

/// A scenario's run: whether every check held, and its steps in order (the last one says what
/// failed, when one did).
public struct ScenarioResult: Codable, Sendable, Equatable {
    /// The scenario's number.
    public var number: Int
    /// The scenario's name in its seed.
    public var name: String
    /// Whether every check held.
    public var passed: Bool
    /// Its steps, in order.
    public var steps: [ScenarioStep]

    /// The run of scenario `number`, called `name`, with its `steps`.
    public init(number: Int, name: String, passed: Bool, steps: [ScenarioStep]) {
        (self.number, self.name, self.passed, self.steps) = (number, name, passed, steps)
    }
}

/// A check of a scenario that did not hold: what was done and what came instead.
public struct ScenarioFailure: Error, Sendable, CustomStringConvertible {
    /// What was done.
    public let action: String
    /// What came instead of what was expected.
    public let outcome: String
    /// The action and its outcome, in one line.
    public var description: String { "\(action): \(outcome)" }
}

/// The log a scenario writes as it goes. Every check records a step; a check that fails
/// records it and throws, which ends the scenario.
public final class ScenarioLog: @unchecked Sendable {
    // Safe: `steps` is read and written under `lock` only.
    private let lock = NSLock()
    private var steps: [ScenarioStep] = []
    private let clock: @Sendable () -> Date
    /// Called with each step as it is recorded (a terminal prints it, a dashboard shows it).
    private let onStep: @Sendable (ScenarioStep) -> Void

    init(clock: @escaping @Sendable () -> Date, onStep: @escaping @Sendable (ScenarioStep) -> Void) {
        (self.clock, self.onStep) = (clock, onStep)
    }

    var recorded: [ScenarioStep] { lock.withLock { steps } }

    /// Records what was done and what came of it.
    func record(_ action: String, _ outcome: String, reason: String? = nil) {
        let step = ScenarioStep(at: clock(), action: action, outcome: outcome, reason: reason)
        lock.withLock { steps.append(step) }
        onStep(step)
    }

    /// Records the step; throws when `holds` is false.
    func check(_ action: String, _ holds: Bool, _ outcome: @autoclosure () -> String, reason: String? = nil) throws {
        let outcome = outcome()
        record(action, holds ? outcome : "FAILED: \(outcome)", reason: reason)
        guard holds else { throw ScenarioFailure(action: action, outcome: outcome) }
    }

    /// Records the step and gives back `value` when it is there; throws when it is not.
    func require<T>(_ action: String, _ value: T?, _ outcome: @autoclosure () -> String, reason: String? = nil) throws
        -> T
    {
        try check(action, value != nil, outcome(), reason: reason)
        return value!
    }
}

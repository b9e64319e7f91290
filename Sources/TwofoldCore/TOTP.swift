import Foundation

/// A time-based one-time password generator (RFC 6238).
public struct TOTP: Sendable {
    public let hotp: HOTP
    public let period: TOTPPeriod

    public init(
        secret: [UInt8],
        algorithm: OTPAlgorithm = .sha1,
        digits: OTPDigits = .six,
        period: TOTPPeriod = .thirtySeconds
    ) throws(OTPParameterError) {
        self.hotp = try HOTP(secret: secret, algorithm: algorithm, digits: digits)
        self.period = period
    }

    public var secret: [UInt8] { hotp.secret }
    public var algorithm: OTPAlgorithm { hotp.algorithm }
    public var digits: OTPDigits { hotp.digits }

    /// The time step (RFC 6238 `T`) containing `unixTime` seconds, with `T0 = 0`.
    public func step(at unixTime: Int64) throws(OTPParameterError) -> UInt64 {
        guard unixTime >= 0 else { throw OTPParameterError(reason: .negativeTime(unixTime)) }
        return UInt64(unixTime) / UInt64(period.seconds)
    }

    /// The step containing `date`.
    public func step(at date: Date) throws(OTPParameterError) -> UInt64 {
        try step(at: Int64(date.timeIntervalSince1970.rounded(.down)))
    }

    /// The code valid at `unixTime` seconds since 1970.
    public func code(at unixTime: Int64) throws(OTPParameterError) -> String {
        hotp.code(counter: try step(at: unixTime))
    }

    /// The code valid at `date`.
    public func code(at date: Date) throws(OTPParameterError) -> String {
        hotp.code(counter: try step(at: date))
    }

    /// The first instant of `step`, as seconds since 1970.
    public func startOfStep(_ step: UInt64) -> Int64 {
        Int64(clamping: step.multipliedReportingOverflow(by: UInt64(period.seconds)).partialValue)
    }

    /// The widest window `verify` honours: ±10 steps (5 minutes at 30 s). Wider windows only
    /// help attackers guess; RFC 6238 §5.2 recommends at most one step of network delay.
    public static let maximumWindow = 10

    /// Checks `candidate` against the steps within `window` of the step at `unixTime` and returns
    /// the step that matched (the earliest, if several do), so a caller can refuse a step it has already accepted once
    /// (RFC 6238 §5.2). Steps at or before `lastUsedStep` never match.
    ///
    /// Every step of the window is computed and compared in constant time whatever matches, so
    /// the time taken does not reveal which step (if any) was right.
    public func verify(
        _ candidate: String,
        at unixTime: Int64,
        window: Int = 1,
        after lastUsedStep: UInt64? = nil
    ) throws(OTPParameterError) -> UInt64? {
        let current = try step(at: unixTime)
        let window = UInt64(Swift.min(Swift.max(0, window), Self.maximumWindow))
        let lowest = current >= window ? current - window : 0
        let (highest, overflow) = current.addingReportingOverflow(window)
        let steps = lowest...(overflow ? UInt64.max : highest)
        var matched: UInt64?
        for (step, code) in zip(steps, hotp.codes(counters: steps)) {
            let isMatch = ConstantTime.equals(code, candidate)
            let isFresh = lastUsedStep.map { step > $0 } ?? true
            if isMatch && isFresh && matched == nil { matched = step }
        }
        return matched
    }

    /// `verify` at `date`.
    public func verify(
        _ candidate: String, at date: Date, window: Int = 1, after lastUsedStep: UInt64? = nil
    ) throws(OTPParameterError) -> UInt64? {
        try verify(
            candidate, at: Int64(date.timeIntervalSince1970.rounded(.down)), window: window,
            after: lastUsedStep)
    }
}

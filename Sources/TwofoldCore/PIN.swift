#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A PIN being typed, kept as digit values in storage this object owns and wipes (seed 001:
/// "prevent that copies of the PIN (even partial copies) remain in memory any longer than
/// strictly necessary"). It never turns the PIN into a `String`, prints as `PIN(3 of 4 digits)`
/// and hides its storage from reflection.
///
/// Ask for the PIN twice and compare with `==` (constant time), check `isCommon`, hand the digits
/// to whoever needs them with `withDigits`, then `reset()`. Storage is also wiped on `deinit`.
public final class PIN {
    /// The number of digits a complete PIN has.
    public let requiredLength: Int
    private let storage: UnsafeMutableBufferPointer<UInt8>
    /// The number of digits entered so far.
    public private(set) var count = 0

    /// An empty PIN of `requiredLength` digits (4…16).
    public init(requiredLength: Int) {
        precondition((4...16).contains(requiredLength), "a PIN has 4 to 16 digits")
        self.requiredLength = requiredLength
        storage = .allocate(capacity: requiredLength)
        storage.initialize(repeating: 0)
    }

    deinit {
        reset()
        storage.deallocate()
    }

    /// Appends `digit` (0…9). Returns `false`, changing nothing, when the PIN is already complete
    /// or `digit` is not a single decimal digit.
    @discardableResult
    public func pushDigit(_ digit: Int) -> Bool {
        guard count < requiredLength, (0...9).contains(digit) else { return false }
        storage[count] = UInt8(digit)
        count += 1
        return true
    }

    /// Removes the last digit, if any, and wipes its slot.
    public func popDigit() {
        guard count > 0 else { return }
        count -= 1
        storage[count] = 0
        Self.wipe(UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(storage)[count..<count + 1]))
    }

    /// `true` once `requiredLength` digits have been entered.
    public var isComplete: Bool { count == requiredLength }

    /// `true` when the PIN is easy to guess: see `CommonPIN`.
    public var isCommon: Bool {
        withDigits { CommonPIN.isCommon($0) }
    }

    /// Sets the value and length back to zero, overwriting the storage in a way the optimiser
    /// cannot remove.
    public func reset() {
        Self.wipe(UnsafeMutableRawBufferPointer(storage))
        count = 0
    }

    /// Lends the entered digit values (0…9, not ASCII) to `body`; do not copy them out.
    public func withDigits<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows
        -> Result
    {
        try body(UnsafeBufferPointer(rebasing: storage[0..<count]))
    }

    private static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        #if canImport(Darwin)
            _ = memset_s(base, buffer.count, 0, buffer.count)
        #else
            explicit_bzero(base, buffer.count)
        #endif
    }
}

extension PIN: Equatable {
    /// Constant-time comparison of two PINs (for "enter your PIN again").
    public static func == (lhs: PIN, rhs: PIN) -> Bool {
        lhs.withDigits { a in rhs.withDigits { b in ConstantTime.equals(a, b) } }
    }
}

extension PIN: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "PIN(\(count) of \(requiredLength) digits)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}

/// Comparison of secrets whose running time does not depend on where the inputs differ.
///
/// Use it for every comparison of codes, MACs, token hashes and PINs: an early-exit `==` lets an
/// attacker learn a secret byte by byte from response times.
public enum ConstantTime {
    /// `true` when both byte sequences are equal. The time taken depends only on the lengths.
    public static func equals<A: Collection, B: Collection>(_ a: A, _ b: B) -> Bool
    where A.Element == UInt8, B.Element == UInt8 {
        // Fold the length difference into the accumulator instead of returning early.
        var difference: UInt64 = UInt64(a.count ^ b.count)
        let longest = Swift.max(a.count, b.count)
        var ia = a.makeIterator()
        var ib = b.makeIterator()
        for _ in 0..<longest {
            let x = ia.next() ?? 0
            let y = ib.next() ?? 0
            difference |= UInt64(x ^ y)
        }
        return difference == 0
    }

    /// `true` when both strings have equal UTF-8 bytes, compared in constant time.
    public static func equals(_ a: String, _ b: String) -> Bool {
        equals(Array(a.utf8), Array(b.utf8))
    }
}

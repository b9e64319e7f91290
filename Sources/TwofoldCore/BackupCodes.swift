/// Backup codes: single-use `XXXX-XXXX` codes a user keeps for when their other factors are
/// unavailable (seed 000).
public enum BackupCodes {
    /// 32 symbols without the look-alikes 0/O and 1/I, so that a code read off paper is typed
    /// right. 32 symbols make each character exactly 5 bits, drawn without modulo bias.
    public static let alphabet: [Character] = Array("23456789ABCDEFGHJKLMNPQRSTUVWXYZ")
    /// Characters per code, before the dash is added.
    public static let length = 8
    /// Codes in a fresh set (seed 000).
    public static let setSize = 10

    /// A fresh set of distinct codes, formatted `XXXX-XXXX`, drawn from `generator` (the
    /// system CSPRNG unless a test injects another).
    public static func generate<G: RandomNumberGenerator>(
        count: Int = setSize, using generator: inout G
    ) -> [String] {
        var codes: [String] = []
        var seen: Set<String> = []
        while codes.count < count {
            var characters: [Character] = []
            for _ in 0..<length {
                characters.append(alphabet[Int(generator.next(upperBound: UInt8(alphabet.count)))])
            }
            let code = String(characters[0..<4]) + "-" + String(characters[4...])
            if seen.insert(code).inserted { codes.append(code) }
        }
        return codes
    }

    /// `generate` with the system's cryptographically secure generator.
    public static func generate(count: Int = setSize) -> [String] {
        var generator = SystemRandomNumberGenerator()
        return generate(count: count, using: &generator)
    }

    /// The canonical form of what a user typed: upper case, without spaces or dashes
    /// (seed 000: "Backup code with spaces/dashes → normalize"). `nil` when the result is not
    /// 8 characters of the alphabet, so it cannot be any code.
    public static func normalize(_ input: String) -> String? {
        let kept = input.uppercased().filter { !$0.isWhitespace && $0 != "-" && $0 != "‐" }
        guard kept.count == length, kept.allSatisfy(alphabet.contains) else { return nil }
        return kept
    }
}

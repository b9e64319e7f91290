/// Formats one-time codes for reading: `123456` → `123 456`, `12345678` → `1234 5678`
/// (seed 000, `codeFormatter.ts`).
public enum CodeFormatter {
    /// Splits a code of 6 or more characters into two groups, the first one the longer when the
    /// length is odd (`1234567` → `1234 567`). Shorter codes are returned unchanged.
    public static func display(_ code: String, separator: String = " ") -> String {
        let characters = Array(code)
        guard characters.count >= 6 else { return code }
        let split = (characters.count + 1) / 2
        return String(characters[..<split]) + separator + String(characters[split...])
    }

    /// Removes the grouping a user may have typed or pasted: spaces and dashes.
    public static func strip(_ input: String) -> String {
        input.filter { !$0.isWhitespace && $0 != "-" }
    }
}

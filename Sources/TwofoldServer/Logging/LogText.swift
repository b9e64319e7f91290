/// Text from outside (paths, headers, user agents) made safe for a one-line log entry.
enum LogText {
    /// `text` with control characters (C0, DEL, C1, and the Unicode line and paragraph
    /// separators) written as `\u{…}` and backslashes doubled, so no input can end a line, start
    /// another or pass for an escape.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar == "\\" {
                result += "\\\\"
            } else if isControl(scalar) {
                result += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\\" || isControl(scalar)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028
            || scalar.value == 0x2029
    }
}

import Foundation
import TwofoldAPI

/// Field rules shared by every endpoint that takes them. Each failure names the field in the
/// problem's `errors`, and nothing is stored until every field passed.
enum InputValidation {
    /// 3–32 characters: letters, digits, `.`, `_`, `-`; stored lower-case.
    static func username(_ value: String) -> String? {
        let canonical = value.trimmingCharacters(in: .whitespaces).lowercased()
        guard (3...32).contains(canonical.count),
            canonical.unicodeScalars.allSatisfy({ allowedUsername.contains($0) })
        else { return nil }
        return canonical
    }

    private static let allowedUsername = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyz0123456789._-")

    /// A plausible address: one `@`, a local part of at most 64 characters, a dotted domain, no
    /// spaces, at most 254 characters in all; stored lower-case.
    static func email(_ value: String) -> String? {
        let canonical = value.trimmingCharacters(in: .whitespaces).lowercased()
        let parts = canonical.split(separator: "@", omittingEmptySubsequences: false)
        guard canonical.count <= 254, parts.count == 2, (1...64).contains(parts[0].count),
            parts[1].count >= 3, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
            !canonical.contains(where: { $0.isWhitespace || $0.isNewline || $0 == "\u{0}" })
        else { return nil }
        return canonical
    }

    /// E.164: `+`, a non-zero digit, then 7 to 14 more digits.
    static func phone(_ value: String) -> String? {
        let digits = value.dropFirst()
        guard value.hasPrefix("+"), (8...15).contains(digits.count), digits.first != "0",
            digits.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        return value
    }

    /// NIST SP 800-63B: at least 8 characters, at most 256, not a known common password; no
    /// composition rules. `nil` when acceptable, otherwise why not.
    static func passwordProblem(_ password: String, username: String?, email: String?) -> String? {
        if password.count < 8 { return "must be at least 8 characters" }
        if password.count > 256 { return "must be at most 256 characters" }
        let lowered = password.lowercased()
        if CommonPasswords.all.contains(lowered) { return "is too common; choose another" }
        if let username, lowered == username { return "must not be the username" }
        if let email, lowered == email || lowered == email.split(separator: "@").first.map(String.init) {
            return "must not be the email address"
        }
        return nil
    }

    static func failure(_ errors: [String: String]) -> Problem {
        let detail = errors.keys.sorted().map { "\($0) \(errors[$0]!)" }.joined(separator: "; ")
        return Problem(
            status: 422, code: .validationFailed, title: "Validation failed", detail: detail + ".", errors: errors)
    }
}

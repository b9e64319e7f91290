import Foundation
import TwofoldAPI
import TwofoldCore

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

    /// The longest code a second step or step-up reads (`openapi.yaml`'s `code`: 1 to 64).
    static let codeLength = 1...64

    /// A code given for a factor: present, and 1 to 64 characters; otherwise a 422 naming the
    /// field and the bounds.
    static func code(_ value: String?) throws -> String {
        guard let value, codeLength.contains(value.count) else {
            throw failure(["code": value == nil || value == "" ? "is required" : "must be 1 to 64 characters"])
        }
        return value
    }

    /// A code as `method` writes it, checked before it can cost a try (issue W item 4: `12` or
    /// `not a code!` is a typo, not a guess): 6 to 8 digits for an authenticator app, 6 for a
    /// code sent by SMS or email, 8 letters and digits for a backup code (case, spaces and dashes
    /// aside). Digits come back without spaces; a backup code as typed (`BackupCodes` reads it).
    /// Every check of such a code starts here, so no path spends an attempt on a malformed one.
    static func code(_ value: String?, for method: FactorMethod) throws -> String {
        let value = try code(value)
        switch method {
        case .totp, .sms, .email:
            let digits = value.filter { !$0.isWhitespace }
            let lengths = method == .totp ? 6...8 : 6...6
            guard lengths.contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                let words =
                    method == .totp
                    ? "A code from your authenticator app is 6 digits." : "The code we sent is 6 digits."
                throw Problem(
                    status: 422, code: .validationFailed, title: "Not a code",
                    detail: "\(words) Check it and try again.",
                    errors: ["code": words])
            }
            return digits
        case .backup:
            guard BackupCodes.normalize(value) != nil else {
                let words = "A backup code is 8 letters and digits, like ABCD-EFGH."
                throw Problem(
                    status: 422, code: .validationFailed, title: "Not a backup code",
                    detail: "\(words) Check it and try again.", errors: ["code": words])
            }
            return value
        default:
            return value
        }
    }

    /// A plausible address: one `@`, a local part of at most 64 characters, a dotted domain, no
    /// spaces, at most 254 characters in all; stored lower-case.
    static func email(_ value: String) -> String? {
        let canonical = value.trimmingCharacters(in: .whitespaces).lowercased()
        let parts = canonical.split(separator: "@", omittingEmptySubsequences: false)
        guard canonical.count <= 254, parts.count == 2, (1...64).contains(parts[0].count),
            isDotAtom(parts[0], allowed: localCharacters), isDomain(parts[1])
        else { return nil }
        return canonical
    }

    /// RFC 5321 §4.1.2 `Dot-string` (RFC 5322 `atext` between single dots); quoted local
    /// parts are refused: they let `<>(),;:"\` and spaces into an address that mail headers,
    /// logs and pages then carry (issue S item 14).
    private static let localCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-/=?^_`{|}~")

    private static func isDotAtom(_ text: Substring, allowed: Set<Character>) -> Bool {
        let atoms = text.split(separator: ".", omittingEmptySubsequences: false)
        return atoms.allSatisfy { !$0.isEmpty && $0.allSatisfy(allowed.contains) }
    }

    /// RFC 5321 `Domain`: at least two dot-separated labels of letters, digits and inner
    /// hyphens, each at most 63 characters.
    private static func isDomain(_ text: Substring) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, text.count <= 253 else { return false }
        return labels.allSatisfy { label in
            (1...63).contains(label.count) && label.first != "-" && label.last != "-"
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
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
    /// composition rules. `nil` when acceptable, otherwise why not. Characters are counted as
    /// code points, as the OpenAPI document's `minLength` and `maxLength` count them.
    static func passwordProblem(_ password: String, username: String?, email: String?) -> String? {
        if password.unicodeScalars.count < 8 { return "must be at least 8 characters" }
        if password.unicodeScalars.count > 256 { return "must be at most 256 characters" }
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

    /// A code point that must not stand in a name shown to people: C0 and C1 controls, DEL,
    /// the line and paragraph separators, and the bidirectional controls (marks, embeddings,
    /// overrides and isolates), which reorder the text around them (Trojan Source, CVE-2021-42574).
    static func isControlOrBidi(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}

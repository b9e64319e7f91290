import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldTestSupport

/// No token, password, code or secret in anything a log or a debugger shows: `print`,
/// interpolation, `debugPrint`, `String(reflecting:)` and `dump`, at any depth. And the rule
/// holds for types added later: every type with a member named as a secret conforms.
@Suite struct RedactionTests {
    static let secret = "S3CRET"
    static let date = Date(timeIntervalSince1970: 1_900_000_000)
    static let user = UserDTO(
        id: UUID(), username: "pat", email: "pat@example.com", phoneNumber: nil, role: "user", status: "active",
        createdAt: date)
    static let tokens = AuthTokensResponse(
        accessToken: TokenDTO(token: secret + "-access", expiresAt: date),
        refreshToken: TokenDTO(token: secret + "-refresh", expiresAt: date), user: user, deviceToken: secret + "-device"
    )

    /// Every way a value reaches a log or a debugger.
    static func everyDescription(of value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), "\(value)", dumped]
    }

    static let values: [(String, any Sendable)] = [
        ("LoginRequest", LoginRequest(username: "pat", password: secret)),
        ("RegisterRequest", RegisterRequest(username: "pat", email: "pat@example.com", password: secret)),
        ("AuthTokensResponse", tokens),
        ("LoginOutcome.signedIn", LoginOutcome.signedIn(tokens)),
        ("an optional in an array", [Optional(tokens)] as [AuthTokensResponse?]),
        ("StoredSession", StoredSession(tokens)),
        ("RefreshRequest", RefreshRequest(refreshToken: secret)),
        ("TOTPValidateRequest", TOTPValidateRequest(tempToken: secret + "-flow", code: secret)),
        (
            "TOTPSetupResponse",
            TOTPSetupResponse(
                secret: secret, otpauthUri: "otpauth://totp/Twofold:pat?secret=\(secret)", qrCodeSvg: "<svg>\(secret)",
                expiresAt: date, serverTime: date)
        ),
        ("BackupCodesResponse", BackupCodesResponse(backupCodes: [secret + "1", secret + "2"])),
        (
            "PendingSignIn",
            PendingSignIn(
                flow: secret,
                step: SecondFactorStep(methods: [.totp], method: .totp, expiresAt: date),
                server: "https://mfa.example.com")
        ),
        ("TOTP", try! TOTP(secret: Array("12345678901234567890".utf8))),
        ("RecoveryRedeemRequest", RecoveryRedeemRequest(pass: secret)),
        ("DeepLink.recovery", DeepLink.recovery(token: secret)),
        (
            "HTTPAnswer",
            HTTPAnswer(
                status: 200, headers: ["Set-Cookie": "twofold_trusted=\(secret)"],
                body: Data(#"{"accessToken":"\#(secret)"}"#.utf8))
        ),
    ]

    @Test(arguments: 0..<values.count) func noDescriptionShowsASecret(index: Int) {
        let (name, value) = Self.values[index]
        for shown in Self.everyDescription(of: value) {
            #expect(!shown.contains(Self.secret), "\(name) shows a secret: \(shown)")
            #expect(!shown.contains("12345678901234567890") && !shown.contains("49, 50, 51"), "\(name): \(shown)")
        }
    }

    @Test func whatIsNotSecretStillShows() {
        let shown = String(describing: StoredSession(Self.tokens))
        #expect(shown.contains("‹redacted›") && shown.contains("pat@example.com") && shown.contains("2030-03-17"))
        #expect(String(describing: LoginRequest(username: "pat", password: "x")).contains("username: \"pat\""))
    }

    /// Every public type of `TwofoldAPI` and `TwofoldClient` with a stored member named in
    /// `Redaction.secretNames` conforms to `RedactedDescription`; the two names below are not
    /// secrets in these types.
    @Test func everyTypeWithASecretMemberHidesIt() throws {
        let notSecret: Set<String> = ["Problem.code", "TwoFactorStatus.backupCodes"]
        var missing: [String] = []
        for folder in ["Sources/TwofoldAPI", "Sources/TwofoldClient"] {
            let url = BuildProducts.repositoryRoot.appendingPathComponent(folder)
            let files = try FileManager.default.contentsOfDirectory(atPath: url.path).filter { $0.hasSuffix(".swift") }
            let sources = try files.map { try String(contentsOf: url.appendingPathComponent($0), encoding: .utf8) }
            let all = sources.joined(separator: "\n")
            for source in sources {
                for (type, member) in Self.storedMembers(of: source) where Redaction.secretNames.contains(member) {
                    guard !notSecret.contains("\(type).\(member)") else { continue }
                    let conforms =
                        all.contains("extension \(type): RedactedDescription")
                        || all.range(
                            of: "struct \(type):[^{]*RedactedDescription", options: .regularExpression) != nil
                    if !conforms { missing.append("\(type).\(member)") }
                }
            }
        }
        #expect(missing.isEmpty, "conform these to RedactedDescription: \(missing)")
    }

    /// The stored members of each struct declared in `source`: `var`/`let` lines one level
    /// inside the struct's body, not computed.
    static func storedMembers(of source: String) -> [(type: String, member: String)] {
        var found: [(String, String)] = []
        var types: [(indent: Int, name: String)] = []
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let text = String(line)
            let indent = text.prefix { $0 == " " }.count
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, !trimmed.hasPrefix("//") else { continue }
            while let last = types.last, indent <= last.indent, trimmed != "}" || indent < last.indent {
                types.removeLast()
            }
            if let match = trimmed.firstMatch(of: /^(?:public |package )?(?:struct|enum|final class|class|actor) (\w+)/)
            {
                types.append((indent, String(match.1)))
            } else if let type = types.last, indent == type.indent + 4,
                let match = trimmed.firstMatch(of: /^(?:public )?(?:var|let) (\w+)\s*:[^{=]*$/)
            {
                found.append((type.name, String(match.1)))
            }
        }
        return found
    }
}

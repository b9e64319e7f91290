import Foundation
import Testing
import TwofoldCore
import TwofoldTestSupport

/// The `twofold` tool, run as a user runs it, checked against independent implementations.
@Suite struct CommandLineToolTests {
    let twofold = ExternalTool(url: BuildProducts.executable("twofold"))
    static let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"  // "12345678901234567890"

    struct Case: Sendable, CustomTestStringConvertible {
        let algorithm: String
        let digits: Int
        let time: Int64
        var testDescription: String { "\(algorithm) \(digits) digits at \(time)" }
    }

    static let cases: [Case] = ["sha1", "sha256", "sha512"].flatMap { algorithm in
        [6, 8].flatMap { digits in
            [Int64(59), 1_111_111_109, 1_234_567_890, 2_000_000_000, 1_790_000_000].map {
                Case(algorithm: algorithm, digits: digits, time: $0)
            }
        }
    }

    @Test("totp code agrees with oathtool", arguments: cases)
    func totpCodeAgreesWithOathtool(testCase: Case) throws {
        guard let oathtool = ExternalTool.find("oathtool", package: "oathtool") else { return }
        let ours = try twofold.run([
            "totp", "code", "--secret", Self.secret, "--time", String(testCase.time), "--digits",
            String(testCase.digits), "--algorithm", testCase.algorithm,
        ])
        #expect(ours.status == 0, "\(ours.errorText)")
        let theirs = try oathtool.run([
            "--totp=\(testCase.algorithm.uppercased())", "--base32", "--digits=\(testCase.digits)",
            "--now=@\(testCase.time)", Self.secret,
        ])
        #expect(theirs.status == 0, "\(theirs.errorText)")
        #expect(ours.text == theirs.text)
        #expect(ours.text.trimmingCharacters(in: .newlines).count == testCase.digits)
    }

    @Test func totpCodeRefusesBadInput() throws {
        for arguments in [
            ["--secret", "not base32!"], ["--secret", Self.secret, "--digits", "9"],
            ["--secret", Self.secret, "--algorithm", "md5"], ["--secret", Self.secret, "--period", "0"],
            ["--secret", Self.secret, "--time", "-5"],
        ] {
            let output = try twofold.run(["totp", "code"] + arguments)
            #expect(output.status != 0, "\(arguments)")
            #expect(output.errorText.contains("Error"), "\(arguments): \(output.errorText)")
        }
    }

    @Test func totpURIPrintsTheKeyURIFormat() throws {
        let output = try twofold.run([
            "totp", "uri", "--issuer", "eToro", "--account", "user@email.com", "--secret", "JBSWY3DPEHPK3PXP",
        ])
        #expect(output.status == 0)
        #expect(
            output.text
                == "otpauth://totp/eToro:user@email.com?secret=JBSWY3DPEHPK3PXP&issuer=eToro&algorithm=SHA1&digits=6&period=30\n"
        )
    }

    @Test func qrWritesAnSVGThatDecodesToTheText() throws {
        guard let rsvg = ExternalTool.find("rsvg-convert", package: "librsvg2-bin"),
            let zbarimg = ExternalTool.find("zbarimg", package: "zbar-tools")
        else { return }
        let directory = try BuildProducts.temporaryDirectory("twofold-cli")
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = "otpauth://totp/Twofold:cli@example.com?secret=JBSWY3DPEHPK3PXP&issuer=Twofold"
        let svg = directory.appendingPathComponent("code.svg")
        let png = directory.appendingPathComponent("code.png")
        #expect(try twofold.run(["qr", text, "--svg", svg.path]).status == 0)
        #expect(try rsvg.run(["-o", png.path, svg.path]).status == 0)
        let decoded = try zbarimg.run(["--raw", "--quiet", png.path])
        #expect(decoded.text == text + "\n")
    }

    @Test func qrDrawsInTheTerminal() throws {
        let output = try twofold.run(["qr", "hello"])
        #expect(output.status == 0)
        let lines = output.text.split(separator: "\n")
        #expect(lines.count == 13)  // 21 modules + 2×2 quiet zone, two rows per line
        #expect(lines.allSatisfy { $0.allSatisfy { " ▀▄█".contains($0) } })
    }

    @Test func backupCodesPrintsAFreshSet() throws {
        let first = try twofold.run(["backup-codes"])
        let second = try twofold.run(["backup-codes"])
        let codes = first.text.split(separator: "\n").map(String.init)
        #expect(codes.count == 10)
        #expect(codes.allSatisfy { BackupCodes.normalize($0) != nil && $0.count == 9 })
        #expect(first.text != second.text)
    }

    // MARK: webauthn

    /// A recorded ceremony of `Tests/Fixtures/webauthn/recorded-ceremonies.json`, its client JSON
    /// written to a file.
    static func ceremony(_ id: String) throws -> (entry: [String: Any], file: String) {
        let url = BuildProducts.repositoryRoot.appendingPathComponent(
            "Tests/Fixtures/webauthn/recorded-ceremonies.json")
        let file = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
        let ceremonies = file?["ceremonies"] as? [[String: Any]] ?? []
        let entry = try #require(ceremonies.first { $0["id"] as? String == id })
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("twofold-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: entry["credential"] ?? [:]).write(to: path)
        return (entry, path.path)
    }

    static func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    @Test func webauthnVerifyRegistrationPrintsTheCredential() throws {
        let (entry, file) = try Self.ceremony("py_webauthn/packed-yubikey-firefox")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let expect = entry["expect"] as? [String: Any] ?? [:]
        let output = try twofold.run([
            "webauthn", "verify-registration", "--rp-id", "localhost", "--origin", "http://localhost:5000",
            "--challenge", entry["challenge_b64url"] as? String ?? "", "--response", file,
        ])
        #expect(output.status == 0, "\(output.errorText)")
        let result = Self.json(output.text)
        #expect(result["verified"] as? Bool == true)
        #expect(result["credentialId"] as? String == expect["credentialId_b64url"] as? String)
        #expect(result["publicKey"] as? String == expect["credentialPublicKey_b64url"] as? String)
        #expect(result["format"] as? String == "packed" && result["attestation"] as? String == "unverified")
        #expect(result["aaguid"] as? String == expect["aaguid"] as? String)
        #expect(result["signCount"] as? Int == 52)

        let refused = try twofold.run([
            "webauthn", "verify-registration", "--rp-id", "localhost", "--origin", "https://evil.test",
            "--challenge", entry["challenge_b64url"] as? String ?? "", "--response", file,
        ])
        #expect(refused.status == 1)
        #expect(Self.json(refused.text)["reason"] as? String == "origin_not_allowed")
        #expect((Self.json(refused.text)["message"] as? String ?? "").contains("http://localhost:5000"))

        // A rawId that is not the attested credential ID is refused, as the server refuses it.
        var credential = try #require(entry["credential"] as? [String: Any])
        credential["rawId"] = "AAAAAAAAAAAAAAAAAAAAAA"
        let otherFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "twofold-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: otherFile) }
        try JSONSerialization.data(withJSONObject: credential).write(to: otherFile)
        let renamed = try twofold.run([
            "webauthn", "verify-registration", "--rp-id", "localhost", "--origin", "http://localhost:5000",
            "--challenge", entry["challenge_b64url"] as? String ?? "", "--response", otherFile.path,
        ])
        #expect(renamed.status == 1, "\(renamed.text)")
        #expect(Self.json(renamed.text)["reason"] as? String == "credential_id_mismatch", "\(renamed.text)")
    }

    @Test func webauthnVerifyAssertionChecksTheSignatureAndCounter() throws {
        let (entry, file) = try Self.ceremony("py_webauthn/auth-es256")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let expect = entry["expect"] as? [String: Any] ?? [:]
        let arguments = [
            "webauthn", "verify-assertion", "--rp-id", "localhost", "--origin", "http://localhost:5000",
            "--challenge", entry["challenge_b64url"] as? String ?? "", "--response", file, "--public-key",
            expect["credentialPublicKey_b64url"] as? String ?? "",
        ]
        let output = try twofold.run(arguments + ["--sign-count", "77"])
        #expect(output.status == 0, "\(output.errorText)")
        #expect(Self.json(output.text)["verified"] as? Bool == true)
        #expect(Self.json(output.text)["signCount"] as? Int == 78)
        let replayed = try twofold.run(arguments + ["--sign-count", "78"])
        #expect(replayed.status == 1 && Self.json(replayed.text)["reason"] as? String == "counter_regression")
        let wrongChallenge = try twofold.run(
            arguments.map { $0 == entry["challenge_b64url"] as? String ? "AAAA" : $0 } + ["--sign-count", "77"])
        #expect(Self.json(wrongChallenge.text)["reason"] as? String == "challenge_mismatch")
        let badInput = try twofold.run([
            "webauthn", "verify-assertion", "--rp-id", "localhost", "--origin", "x",
            "--challenge", "!!", "--public-key", "AA", "--response", file,
        ])
        #expect(badInput.status != 0 && badInput.status != 1, "a usage error, not a refusal")
    }
}

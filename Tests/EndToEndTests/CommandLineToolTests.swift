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
}

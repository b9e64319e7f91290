import Foundation
import Testing
import TwofoldCore
import TwofoldTestSupport

/// The QR encoder proven by a real decoder: what it draws, `zbarimg` (Debian's zbar-tools) reads
/// back to the exact input.
@Suite struct QRCodeDecodingTests {
    /// Printable text of `length` characters, different for every length and level.
    static func text(length: Int, seed: UInt64) -> String {
        var rng = SplitMix64(seed: seed)
        let pool = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 -_.:/?&=%+*$")
        return String((0..<length).map { _ in pool[Int(rng.next() % UInt64(pool.count))] })
    }

    /// Decodes an image file with zbarimg; `nil` (after recording why) when the tool is missing.
    static func decode(_ image: URL) throws -> String? {
        guard let zbarimg = ExternalTool.find("zbarimg", package: "zbar-tools") else { return nil }
        let output = try zbarimg.run(["--raw", "--quiet", "-Sdisable", "-Sqrcode.enable", image.path])
        #expect(output.status == 0, "zbarimg failed: \(output.errorText)")
        var text = output.text
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    static func decodePBM(_ code: QRCode) throws -> String? {
        let directory = try BuildProducts.temporaryDirectory("qr")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("code.pbm")
        try Data(code.pbm(scale: code.version > 20 ? 3 : 4).utf8).write(to: file)
        return try decode(file)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let version: Int
        let level: QRErrorCorrection
        var testDescription: String { "version \(version) \(level.rawValue)" }
    }

    /// Every version at every level, each filled to its byte capacity so that exactly that
    /// version is chosen: proves the block tables, alignment positions and version information.
    static let everyVersionAndLevel: [Case] = (1...40).flatMap { version in
        QRErrorCorrection.allCases.map { Case(version: version, level: $0) }
    }

    @Test("full symbols decode", arguments: everyVersionAndLevel)
    func fullSymbolDecodesToItsInput(testCase: Case) throws {
        let capacity = QRCode.byteCapacity(version: testCase.version, errorCorrection: testCase.level)
        let input = Self.text(
            length: capacity,
            seed: UInt64(testCase.version * 4 + QRErrorCorrection.allCases.firstIndex(of: testCase.level)!))
        let code = try QRCode(text: input, errorCorrection: testCase.level)
        #expect(code.version == testCase.version)
        #expect(code.size == testCase.version * 4 + 17)
        guard let decoded = try Self.decodePBM(code) else { return }
        #expect(decoded == input)
    }

    static let lengths = [1, 2, 10, 17, 33, 64, 100, 250, 600, 1200]

    @Test("short and long inputs decode at each level", arguments: QRErrorCorrection.allCases, lengths)
    func inputDecodes(level: QRErrorCorrection, length: Int) throws {
        guard length <= QRCode.byteCapacity(version: 40, errorCorrection: level) else { return }
        let input = Self.text(length: length, seed: UInt64(length))
        let code = try QRCode(text: input, errorCorrection: level)
        guard let decoded = try Self.decodePBM(code) else { return }
        #expect(decoded == input)
    }

    @Test("every mask pattern decodes", arguments: 0...7)
    func everyMaskDecodes(mask: Int) throws {
        let input = "otpauth://totp/Twofold:mask\(mask)@example.com?secret=JBSWY3DPEHPK3PXP&issuer=Twofold"
        let code = try QRCode(bytes: Array(input.utf8), errorCorrection: .medium, forcedMask: mask)
        #expect(code.mask == mask)
        guard let decoded = try Self.decodePBM(code) else { return }
        #expect(decoded == input)
    }

    @Test("the SVG rendering decodes", arguments: QRErrorCorrection.allCases)
    func svgDecodes(level: QRErrorCorrection) throws {
        guard let rsvg = ExternalTool.find("rsvg-convert", package: "librsvg2-bin") else { return }
        let input =
            "otpauth://totp/eToro:user@email.com?secret=JBSWY3DPEHPK3PXP&issuer=eToro&algorithm=SHA1&digits=6&period=30"
        let code = try QRCode(text: input, errorCorrection: level)
        let directory = try BuildProducts.temporaryDirectory("qr-svg")
        defer { try? FileManager.default.removeItem(at: directory) }
        let svg = directory.appendingPathComponent("code.svg")
        let png = directory.appendingPathComponent("code.png")
        try Data(code.svg().utf8).write(to: svg)
        let converted = try rsvg.run(["--background-color=white", "-o", png.path, svg.path])
        #expect(converted.status == 0, "\(converted.errorText)")
        guard let decoded = try Self.decode(png) else { return }
        #expect(decoded == input)
    }

    @Test func unicodeTextDecodes() throws {
        let input = "Zürich — 東京 — ✓"
        let code = try QRCode(text: input, errorCorrection: .quartile)
        guard let decoded = try Self.decodePBM(code) else { return }
        #expect(decoded == input)
    }
}

@Suite struct QRCodeTests {
    @Test func capacitiesMatchTheStandard() {
        // ISO/IEC 18004 Table 7, byte mode.
        #expect(QRCode.byteCapacity(version: 1, errorCorrection: .low) == 17)
        #expect(QRCode.byteCapacity(version: 1, errorCorrection: .high) == 7)
        #expect(QRCode.byteCapacity(version: 10, errorCorrection: .medium) == 213)
        #expect(QRCode.byteCapacity(version: 40, errorCorrection: .low) == 2953)
        #expect(QRCode.byteCapacity(version: 40, errorCorrection: .medium) == 2331)
        #expect(QRCode.byteCapacity(version: 40, errorCorrection: .quartile) == 1663)
        #expect(QRCode.byteCapacity(version: 40, errorCorrection: .high) == 1273)
    }

    @Test func tooLongInputIsAnErrorNotATrap() {
        #expect(throws: QRCodeError.self) {
            try QRCode(bytes: [UInt8](repeating: 0x41, count: 2954), errorCorrection: .low)
        }
        #expect(throws: QRCodeError.self) {
            try QRCode(bytes: [UInt8](repeating: 0x41, count: 1274), errorCorrection: .high)
        }
    }

    @Test func emptyInputMakesAVersionOneSymbol() throws {
        let code = try QRCode(bytes: [])
        #expect(code.version == 1)
        #expect(code.size == 21)
    }

    @Test func finderPatternsSitInThreeCorners() throws {
        let code = try QRCode(text: "hello")
        for (x, y) in [(0, 0), (code.size - 7, 0), (0, code.size - 7)] {
            // Outer ring dark, next ring light, 3×3 core dark.
            #expect(code.isDark(x: x, y: y) && code.isDark(x: x + 6, y: y + 6))
            #expect(!code.isDark(x: x + 1, y: y + 1) && !code.isDark(x: x + 5, y: y + 1))
            #expect(code.isDark(x: x + 2, y: y + 2) && code.isDark(x: x + 4, y: y + 4))
        }
        #expect(!code.isDark(x: -1, y: 0) && !code.isDark(x: code.size, y: 0))
    }

    @Test func terminalRenderingUsesHalfBlocks() throws {
        let code = try QRCode(text: "hello")
        let lines = code.terminalString(border: 2).split(separator: "\n")
        #expect(lines.count == (code.size + 4 + 1) / 2)
        #expect(lines.allSatisfy { $0.count == code.size + 4 })
        #expect(lines.allSatisfy { $0.allSatisfy { " ▀▄█".contains($0) } })
        // The quiet zone is light, so it is drawn as full blocks on a dark terminal.
        #expect(lines[0].allSatisfy { $0 == "█" })
        // A dark-on-light terminal draws the dark modules instead, so the quiet zone is blank.
        #expect(code.terminalString(border: 2, darkOnLight: true).split(separator: "\n")[0].allSatisfy { $0 == " " })
    }

    @Test func svgIsAWellFormedDocument() throws {
        let svg = try QRCode(text: "hello").svg()
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.hasSuffix("</svg>"))
        #expect(svg.contains("viewBox=\"0 0 29 29\""))
    }
}

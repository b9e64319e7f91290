import Testing

@testable import TwofoldCore

/// The mask-selection penalty rules of ISO/IEC 18004 §7.8.3, checked on hand-made lines.
@Suite struct QRPenaltyTests {
    func line(_ text: String) -> [Bool] { text.map { $0 == "1" } }

    @Test func runsOfFiveOrMoreScoreThreePlusTheExcess() {
        #expect(QRMatrix.runPenalty(line("1111")) == 0)
        #expect(QRMatrix.runPenalty(line("11111")) == 3)
        #expect(QRMatrix.runPenalty(line("0111111")) == 4)
        #expect(QRMatrix.runPenalty(line("000001111111")) == 3 + 5)
        #expect(QRMatrix.runPenalty(line("1010101010")) == 0)
    }

    @Test func finderLikePatternsNeedFourLightModulesOnOneSide() {
        #expect(QRMatrix.finderPenalty(line("10111010000")) == 40)
        #expect(QRMatrix.finderPenalty(line("00001011101")) == 40)
        // At the edge, the quiet zone beyond the symbol counts as light.
        #expect(QRMatrix.finderPenalty(line("1011101")) == 40)
        #expect(QRMatrix.finderPenalty(line("110111011")) == 0)
        #expect(QRMatrix.finderPenalty(line("11011101001")) == 0)
    }

    @Test func balanceAndBlocksCount() {
        // An all-light version-1 grid: every 2×2 block is one colour, every line one run, and
        // 0 % dark is ten 5 % steps from half.
        let matrix = QRMatrix(version: 1)
        let size = 21
        let blocks = (size - 1) * (size - 1) * 3
        let runs = 2 * size * (size - 2)
        #expect(matrix.score() == blocks + runs + 90)
    }

    @Test func theChosenMaskHasTheLowestPenalty() throws {
        let text = "otpauth://totp/Twofold:alice@example.com?secret=JBSWY3DPEHPK3PXP&issuer=Twofold"
        let chosen = try QRCode(text: text)
        let scores = try (0...7).map { mask in
            try QRCode(bytes: Array(text.utf8), errorCorrection: .medium, forcedMask: mask).penaltyScore
        }
        #expect(scores[chosen.mask] == scores.min())
    }
}

import Testing
import TwofoldCore
import TwofoldTestSupport

@Suite struct BackupCodesTests {
    @Test func aSetIsTenDistinctCodesInTheSeedFormat() {
        let codes = BackupCodes.generate()
        #expect(codes.count == 10)
        #expect(Set(codes).count == 10)
        for code in codes {
            let parts = code.split(separator: "-")
            #expect(parts.count == 2 && parts.allSatisfy { $0.count == 4 }, "\(code)")
            #expect(code.replacingOccurrences(of: "-", with: "").allSatisfy(BackupCodes.alphabet.contains))
        }
    }

    @Test func theAlphabetHasNoLookAlikes() {
        for ambiguous: Character in ["0", "O", "1", "I"] {
            #expect(!BackupCodes.alphabet.contains(ambiguous))
        }
        #expect(BackupCodes.alphabet.count == 32)
        #expect(Set(BackupCodes.alphabet).count == 32)
    }

    @Test func everySymbolIsUsedRoughlyEvenly() {
        var rng = SplitMix64(seed: 7)
        var counts: [Character: Int] = [:]
        for code in BackupCodes.generate(count: 2_000, using: &rng) {
            for character in code where character != "-" { counts[character, default: 0] += 1 }
        }
        // 16 000 symbols over 32: 500 expected each; a biased draw would stray far.
        #expect(counts.count == 32)
        #expect(counts.values.allSatisfy { (380...620).contains($0) }, "\(counts)")
    }

    @Test func inputIsNormalisedBeforeComparison() {
        #expect(BackupCodes.normalize("abcd-efgh") == "ABCDEFGH")
        #expect(BackupCodes.normalize(" ABCD EFGH ") == "ABCDEFGH")
        #expect(BackupCodes.normalize("ab-cd-ef-gh") == "ABCDEFGH")
        #expect(BackupCodes.normalize("ABCD-EFG") == nil)
        #expect(BackupCodes.normalize("ABCD-EFGH-J") == nil)
        #expect(BackupCodes.normalize("ABCD-EFG0") == nil)
        #expect(BackupCodes.normalize("") == nil)
    }

    @Test func codesAreFormattedForReading() {
        #expect(CodeFormatter.display("123456") == "123 456")
        #expect(CodeFormatter.display("12345678") == "1234 5678")
        #expect(CodeFormatter.display("ABCDEFGH") == "ABCD EFGH")
        #expect(CodeFormatter.display("1234567") == "1234 567")
        #expect(CodeFormatter.display("12345") == "12345")
        #expect(CodeFormatter.display("123456", separator: "-") == "123-456")
        #expect(CodeFormatter.strip(" 123 456 ") == "123456")
        #expect(CodeFormatter.strip("ABCD-EFGH") == "ABCDEFGH")
    }

    @Test func constantTimeComparison() {
        #expect(ConstantTime.equals("123456", "123456"))
        #expect(!ConstantTime.equals("123456", "123457"))
        #expect(!ConstantTime.equals("123456", "1234567"))
        #expect(!ConstantTime.equals("", "1"))
        #expect(ConstantTime.equals([UInt8](), [UInt8]()))
        #expect(!ConstantTime.equals([0, 0], [0]))
    }
}

/// Recognises easily guessed PINs (seed 001: "check whether the PIN is common"). The server uses
/// the same rule when a device sets or changes its PIN.
public enum CommonPIN {
    /// The most-used PINs in published analyses of leaked PIN sets (DataGenetics, 2012, for
    /// 4 digits; the RockYou-derived top lists for 6), beyond what the pattern rules catch.
    static let mostUsed: Set<[UInt8]> = Set(
        [
            "1234", "1111", "0000", "1212", "7777", "1004", "2000", "4444", "2222", "6969",
            "9999", "3333", "5555", "6666", "1122", "1313", "8888", "4321", "2001", "1010",
            "2580", "0852", "1357", "2468", "1470", "0987", "5683", "0007", "1984", "6789",
            "123456", "654321", "111111", "000000", "123123", "112233", "121212", "696969",
            "123321", "159753", "147258", "789456", "102030", "147852", "987654", "666666",
            "520520", "131313", "159357", "252525",
        ].map { Array($0.utf8).map { $0 - UInt8(ascii: "0") } })

    /// `true` for digit values (0…9) that form a common PIN: one digit repeated, a run up or down
    /// (wrapping 9→0), a short block repeated (`1212`, `123123`), a year 1900–2099, or one of
    /// the most-used PINs.
    public static func isCommon<Digits: Collection>(_ digits: Digits) -> Bool
    where Digits.Element == UInt8 {
        let d = Array(digits)
        guard d.count >= 2 else { return true }
        if mostUsed.contains(d) { return true }
        if isRun(d, step: 1) || isRun(d, step: 9) { return true }
        if repeatsBlock(d) { return true }
        if d.count == 4 {
            let value = Int(d[0]) * 1000 + Int(d[1]) * 100 + Int(d[2]) * 10 + Int(d[3])
            if (1900...2099).contains(value) { return true }
        }
        return false
    }

    /// Every digit is the previous plus `step` modulo 10 (1 for up, 9 for down).
    private static func isRun(_ d: [UInt8], step: UInt8) -> Bool {
        zip(d, d.dropFirst()).allSatisfy { ($0 + step) % 10 == $1 }
    }

    /// The PIN is a block of at most half its length repeated (covers all-same digits too).
    private static func repeatsBlock(_ d: [UInt8]) -> Bool {
        for block in 1...(d.count / 2) where d.count % block == 0 {
            if d.indices.allSatisfy({ d[$0] == d[$0 % block] }) { return true }
        }
        return false
    }
}

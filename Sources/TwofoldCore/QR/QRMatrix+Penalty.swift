extension QRMatrix {
    /// The penalty score of the symbol with `mask` applied and its format bits drawn, by the four
    /// rules of ISO/IEC 18004 §7.8.3: runs of one colour, 2×2 blocks, finder-like patterns, and
    /// imbalance of dark and light.
    func penalty(mask: Int, level: QRErrorCorrection) -> Int {
        var masked = self
        masked.applyMask(mask)
        masked.drawFormatBits(level: level, mask: mask)
        return masked.score()
    }

    func score() -> Int {
        var total = 0
        for index in 0..<size {
            let row = (0..<size).map { self[$0, index] }
            let column = (0..<size).map { self[index, $0] }
            total += Self.runPenalty(row) + Self.finderPenalty(row)
            total += Self.runPenalty(column) + Self.finderPenalty(column)
        }
        // Rule 2: 3 points for each 2×2 block of one colour (overlapping blocks count).
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) {
                let colour = self[x, y]
                if colour == self[x + 1, y] && colour == self[x, y + 1] && colour == self[x + 1, y + 1] {
                    total += 3
                }
            }
        }
        // Rule 4: 10 points for every full 5 % the dark share is away from 50 %.
        let dark = modules.reduce(0) { $0 + ($1 ? 1 : 0) }
        let all = size * size
        total += max(0, (abs(dark * 20 - all * 10) + all - 1) / all - 1) * 10
        return total
    }

    /// Rule 1: a run of 5 or more modules of one colour scores 3, plus 1 per module beyond 5.
    static func runPenalty(_ line: [Bool]) -> Int {
        var total = 0
        var runLength = 1
        for index in 1...line.count {
            if index < line.count && line[index] == line[index - 1] {
                runLength += 1
            } else {
                if runLength >= 5 { total += runLength - 2 }
                runLength = 1
            }
        }
        return total
    }

    /// Rule 3: 40 points for each dark-light-dark×3-light-dark (1:1:3:1:1) pattern with four light
    /// modules on one side; the area beyond the symbol counts as light.
    static func finderPenalty(_ line: [Bool]) -> Int {
        let core: [Bool] = [true, false, true, true, true, false, true]
        // Index into the line as if 4 light modules were added at both ends.
        func module(_ index: Int) -> Bool {
            index >= 4 && index < line.count + 4 ? line[index - 4] : false
        }
        func isLight(from start: Int) -> Bool { (start..<start + 4).allSatisfy { !module($0) } }
        var total = 0
        for start in 0...(line.count + 8 - core.count) {
            guard (0..<7).allSatisfy({ module(start + $0) == core[$0] }) else { continue }
            if (start >= 4 && isLight(from: start - 4)) || isLight(from: start + 7) { total += 40 }
        }
        return total
    }
}

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
        var line = [Bool](repeating: false, count: size)
        for index in 0..<size {
            for position in 0..<size { line[position] = modules[index * size + position] }
            total += Self.runPenalty(line) + Self.finderPenalty(line)
            for position in 0..<size { line[position] = modules[position * size + index] }
            total += Self.runPenalty(line) + Self.finderPenalty(line)
        }
        // Rule 2: 3 points for each 2×2 block of one colour (overlapping blocks count).
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) {
                let colour = modules[y * size + x]
                if colour == modules[y * size + x + 1] && colour == modules[(y + 1) * size + x]
                    && colour == modules[(y + 1) * size + x + 1]
                {
                    total += 3
                }
            }
        }
        // Rule 4: 10 points for every full 5 % the dark share is away from 50 %.
        var dark = 0
        for module in modules where module { dark += 1 }
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
        let count = line.count
        func isDark(_ index: Int) -> Bool { index >= 0 && index < count && line[index] }
        func isLight(from start: Int) -> Bool {
            !isDark(start) && !isDark(start + 1) && !isDark(start + 2) && !isDark(start + 3)
        }
        var total = 0
        // `start` is where the 1:1:3:1:1 core begins; it may not reach beyond the symbol.
        for start in 0...(count - 7) {
            guard line[start], !line[start + 1], line[start + 2], line[start + 3], line[start + 4],
                !line[start + 5], line[start + 6]
            else { continue }
            if isLight(from: start - 4) || isLight(from: start + 7) { total += 40 }
        }
        return total
    }
}

/// Sizes from ISO/IEC 18004 Table 9, in the compact form of two numbers per version and level:
/// error-correction codewords per block and the number of blocks. Everything else (data
/// codewords, short and long blocks) follows from the symbol's raw capacity.
enum QRTables {
    static let eccCodewordsPerBlock: [[Int]] = [
        // Version: 1 … 40
        [
            7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28,
            28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],  // L
        [
            10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
            26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
        ],  // M
        [
            13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30,
            28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],  // Q
        [
            17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28,
            30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],  // H
    ]

    static let errorCorrectionBlocks: [[Int]] = [
        [
            1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8,
            8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25,
        ],  // L
        [
            1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
            17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49,
        ],  // M
        [
            1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20,
            23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68,
        ],  // Q
        [
            1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25,
            25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81,
        ],  // H
    ]

    /// Modules available for data and error correction once every function pattern is drawn.
    static func rawDataModules(version: Int) -> Int {
        var result = (16 * version + 128) * version + 64
        if version >= 2 {
            let alignments = version / 7 + 2
            result -= (25 * alignments - 10) * alignments - 55
            if version >= 7 { result -= 36 }  // two 6×3 version-information blocks
        }
        return result
    }

    static func rawCodewords(version: Int) -> Int { rawDataModules(version: version) / 8 }

    static func eccPerBlock(version: Int, level: QRErrorCorrection) -> Int {
        eccCodewordsPerBlock[level.tableIndex][version - 1]
    }

    static func blocks(version: Int, level: QRErrorCorrection) -> Int {
        errorCorrectionBlocks[level.tableIndex][version - 1]
    }

    static func dataCodewords(version: Int, level: QRErrorCorrection) -> Int {
        rawCodewords(version: version) - eccPerBlock(version: version, level: level)
            * blocks(version: version, level: level)
    }

    /// The most bytes a symbol of this version and level holds in byte mode.
    static func byteCapacity(version: Int, level: QRErrorCorrection) -> Int {
        let countBits = version <= 9 ? 8 : 16
        return (dataCodewords(version: version, level: level) * 8 - 4 - countBits) / 8
    }

    /// Centres of the alignment patterns along one axis (ISO/IEC 18004 Annex E), evenly spaced
    /// from the bottom-right towards column/row 6.
    static func alignmentPositions(version: Int) -> [Int] {
        guard version > 1 else { return [] }
        let count = version / 7 + 2
        let size = version * 4 + 17
        let step = (version * 8 + count * 3 + 5) / (count * 4 - 4) * 2
        var positions: [Int] = []
        var position = size - 7
        for _ in 0..<(count - 1) {
            positions.insert(position, at: 0)
            position -= step
        }
        positions.insert(6, at: 0)
        return positions
    }
}

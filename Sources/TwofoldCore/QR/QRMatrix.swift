/// The module grid while a symbol is built: function patterns first, then codewords, then a
/// mask and the format information (ISO/IEC 18004 §7.7–7.9).
struct QRMatrix {
    let version: Int
    let size: Int
    var modules: [Bool]
    /// Finder, separator, timing, alignment, format and version modules: never masked or
    /// overwritten by data.
    var isFunction: [Bool]

    init(version: Int) {
        self.version = version
        size = version * 4 + 17
        modules = [Bool](repeating: false, count: size * size)
        isFunction = [Bool](repeating: false, count: size * size)
    }

    subscript(x: Int, y: Int) -> Bool {
        get { modules[y * size + x] }
        set { modules[y * size + x] = newValue }
    }

    private mutating func setFunction(x: Int, y: Int, dark: Bool) {
        modules[y * size + x] = dark
        isFunction[y * size + x] = true
    }

    mutating func drawFunctionPatterns() {
        for index in 0..<size {
            setFunction(x: 6, y: index, dark: index % 2 == 0)
            setFunction(x: index, y: 6, dark: index % 2 == 0)
        }
        drawFinder(centreX: 3, centreY: 3)
        drawFinder(centreX: size - 4, centreY: 3)
        drawFinder(centreX: 3, centreY: size - 4)

        let positions = QRTables.alignmentPositions(version: version)
        let last = positions.count - 1
        for (i, x) in positions.enumerated() {
            for (j, y) in positions.enumerated() {
                // Skip the three corners that the finder patterns occupy.
                if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                drawAlignment(centreX: x, centreY: y)
            }
        }
        // Reserve the format areas now (real bits come after masking) and draw the version.
        drawFormatBits(level: .low, mask: 0)
        drawVersionBits()
    }

    /// A 7×7 finder with its one-module light separator, clipped at the edges.
    private mutating func drawFinder(centreX: Int, centreY: Int) {
        for dy in -4...4 {
            for dx in -4...4 {
                let x = centreX + dx
                let y = centreY + dy
                guard x >= 0, x < size, y >= 0, y < size else { continue }
                let distance = max(abs(dx), abs(dy))
                setFunction(x: x, y: y, dark: distance != 2 && distance != 4)
            }
        }
    }

    private mutating func drawAlignment(centreX: Int, centreY: Int) {
        for dy in -2...2 {
            for dx in -2...2 {
                setFunction(x: centreX + dx, y: centreY + dy, dark: max(abs(dx), abs(dy)) != 1)
            }
        }
    }

    /// The 15-bit format information, BCH(15,5) with generator 0x537 and mask 0x5412, placed
    /// twice (ISO/IEC 18004 §7.9.1), plus the always-dark module.
    mutating func drawFormatBits(level: QRErrorCorrection, mask: Int) {
        let data = level.formatBits << 3 | mask
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        let bits = (data << 10 | remainder) ^ 0x5412
        func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }

        for index in 0...5 { setFunction(x: 8, y: index, dark: bit(index)) }
        setFunction(x: 8, y: 7, dark: bit(6))
        setFunction(x: 8, y: 8, dark: bit(7))
        setFunction(x: 7, y: 8, dark: bit(8))
        for index in 9..<15 { setFunction(x: 14 - index, y: 8, dark: bit(index)) }

        for index in 0..<8 { setFunction(x: size - 1 - index, y: 8, dark: bit(index)) }
        for index in 8..<15 { setFunction(x: 8, y: size - 15 + index, dark: bit(index)) }
        setFunction(x: 8, y: size - 8, dark: true)
    }

    /// The 18-bit version information of versions 7 and up, BCH(18,6) with generator 0x1F25.
    private mutating func drawVersionBits() {
        guard version >= 7 else { return }
        var remainder = version
        for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
        let bits = version << 12 | remainder
        for index in 0..<18 {
            let dark = (bits >> index) & 1 == 1
            let a = size - 11 + index % 3
            let b = index / 3
            setFunction(x: a, y: b, dark: dark)
            setFunction(x: b, y: a, dark: dark)
        }
    }

    /// Places codeword bits in the two-column zigzag from the bottom-right, skipping the
    /// vertical timing column (ISO/IEC 18004 §7.7.3). Remainder bits stay light.
    mutating func drawCodewords(_ codewords: [UInt8]) {
        let totalBits = codewords.count * 8
        var bitIndex = 0
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            let upward = ((right + 1) & 2) == 0
            for vertical in 0..<size {
                let y = upward ? size - 1 - vertical : vertical
                for column in 0..<2 {
                    let x = right - column
                    guard !isFunction[y * size + x], bitIndex < totalBits else { continue }
                    let byte = codewords[bitIndex >> 3]
                    self[x, y] = (byte >> UInt8(7 - (bitIndex & 7))) & 1 == 1
                    bitIndex += 1
                }
            }
            right -= 2
        }
    }

    static func maskBit(_ mask: Int, x: Int, y: Int) -> Bool {
        switch mask {
        case 0: return (x + y) % 2 == 0
        case 1: return y % 2 == 0
        case 2: return x % 3 == 0
        case 3: return (x + y) % 3 == 0
        case 4: return (x / 3 + y / 2) % 2 == 0
        case 5: return x * y % 2 + x * y % 3 == 0
        case 6: return (x * y % 2 + x * y % 3) % 2 == 0
        default: return ((x + y) % 2 + x * y % 3) % 2 == 0
        }
    }

    /// XORs the mask pattern over every non-function module; applying it twice undoes it.
    mutating func applyMask(_ mask: Int) {
        for y in 0..<size {
            for x in 0..<size where !isFunction[y * size + x] && Self.maskBit(mask, x: x, y: y) {
                self[x, y].toggle()
            }
        }
    }
}

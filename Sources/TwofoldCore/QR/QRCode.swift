/// Why text could not be drawn as a QR code.
public struct QRCodeError: Error, Equatable, CustomStringConvertible, Sendable {
    enum Reason: Equatable, Sendable {
        case tooLong(bytes: Int, level: QRErrorCorrection)
    }
    let reason: Reason

    public var description: String {
        switch reason {
        case .tooLong(let bytes, let level):
            return "QR code: \(bytes) bytes do not fit in a version-40 symbol at level \(level.rawValue) "
                + "(at most \(QRTables.byteCapacity(version: 40, level: level)))"
        }
    }
}

/// A QR code (Model 2, ISO/IEC 18004) holding bytes in byte mode: the smallest version that fits
/// at the chosen error-correction level, with the mask of lowest penalty.
public struct QRCode: Sendable {
    /// 1…40; the symbol is `4 × version + 17` modules wide.
    public let version: Int
    public let errorCorrection: QRErrorCorrection
    /// The mask pattern 0…7 chosen by the penalty rules.
    public let mask: Int
    /// Modules per side.
    public let size: Int
    /// Row-major; `true` is dark.
    let modules: [Bool]

    /// `true` when the module at column `x`, row `y` is dark; outside the symbol is light.
    public func isDark(x: Int, y: Int) -> Bool {
        guard x >= 0, y >= 0, x < size, y < size else { return false }
        return modules[y * size + x]
    }

    /// Encodes UTF-8 text.
    public init(text: String, errorCorrection: QRErrorCorrection = .medium) throws(QRCodeError) {
        try self.init(bytes: Array(text.utf8), errorCorrection: errorCorrection)
    }

    /// Encodes bytes in byte mode. `forcedMask` is for tests; normally the penalty rules choose.
    public init(bytes: [UInt8], errorCorrection: QRErrorCorrection = .medium, forcedMask: Int? = nil)
        throws(QRCodeError)
    {
        guard
            let version = (1...40).first(where: {
                QRTables.byteCapacity(version: $0, level: errorCorrection) >= bytes.count
            })
        else { throw QRCodeError(reason: .tooLong(bytes: bytes.count, level: errorCorrection)) }

        let data = Self.dataCodewords(bytes, version: version, level: errorCorrection)
        let codewords = Self.interleaveWithErrorCorrection(data, version: version, level: errorCorrection)
        var matrix = QRMatrix(version: version)
        matrix.drawFunctionPatterns()
        matrix.drawCodewords(codewords)

        let chosen: Int
        if let forcedMask, (0...7).contains(forcedMask) {
            chosen = forcedMask
        } else {
            chosen = (0...7).min { a, b in
                matrix.penalty(mask: a, level: errorCorrection)
                    < matrix.penalty(mask: b, level: errorCorrection)
            }!
        }
        matrix.applyMask(chosen)
        matrix.drawFormatBits(level: errorCorrection, mask: chosen)

        self.version = version
        self.errorCorrection = errorCorrection
        self.mask = chosen
        self.size = matrix.size
        self.modules = matrix.modules
    }

    /// Mode indicator, character count, the bytes, terminator and padding (ISO/IEC 18004 §7.4).
    static func dataCodewords(_ bytes: [UInt8], version: Int, level: QRErrorCorrection) -> [UInt8] {
        let capacityBits = QRTables.dataCodewords(version: version, level: level) * 8
        var bits = BitBuffer()
        bits.append(0b0100, count: 4)  // byte mode
        bits.append(bytes.count, count: version <= 9 ? 8 : 16)
        for byte in bytes { bits.append(Int(byte), count: 8) }
        bits.append(0, count: min(4, capacityBits - bits.count))  // terminator
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var codewords = bits.bytes
        var pad: UInt8 = 0xEC
        while codewords.count * 8 < capacityBits {
            codewords.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        return codewords
    }

    /// Splits the data into blocks, appends each block's Reed–Solomon codewords, and interleaves
    /// data then ECC column by column (ISO/IEC 18004 §7.6).
    static func interleaveWithErrorCorrection(
        _ data: [UInt8], version: Int, level: QRErrorCorrection
    ) -> [UInt8] {
        let blockCount = QRTables.blocks(version: version, level: level)
        let eccLength = QRTables.eccPerBlock(version: version, level: level)
        let raw = QRTables.rawCodewords(version: version)
        let shortBlocks = blockCount - raw % blockCount
        let shortDataLength = raw / blockCount - eccLength
        let rs = ReedSolomon(degree: eccLength)

        var dataBlocks: [[UInt8]] = []
        var eccBlocks: [[UInt8]] = []
        var offset = 0
        for index in 0..<blockCount {
            let length = shortDataLength + (index < shortBlocks ? 0 : 1)
            let block = Array(data[offset..<offset + length])
            offset += length
            dataBlocks.append(block)
            eccBlocks.append(rs.remainder(of: block))
        }

        var result: [UInt8] = []
        result.reserveCapacity(raw)
        for column in 0...shortDataLength {
            for block in dataBlocks where column < block.count { result.append(block[column]) }
        }
        for column in 0..<eccLength {
            for block in eccBlocks { result.append(block[column]) }
        }
        return result
    }
}

/// Bits appended most significant first.
struct BitBuffer {
    private(set) var bits: [Bool] = []
    var count: Int { bits.count }

    mutating func append(_ value: Int, count: Int) {
        for shift in stride(from: count - 1, through: 0, by: -1) {
            bits.append((value >> shift) & 1 == 1)
        }
    }

    var bytes: [UInt8] {
        var result = [UInt8](repeating: 0, count: (bits.count + 7) / 8)
        for (index, bit) in bits.enumerated() where bit {
            result[index / 8] |= 0x80 >> UInt8(index % 8)
        }
        return result
    }
}

extension QRCode {
    /// The most bytes a symbol of `version` holds at `errorCorrection` in byte mode.
    public static func byteCapacity(version: Int, errorCorrection: QRErrorCorrection) -> Int {
        guard (1...40).contains(version) else { return 0 }
        return QRTables.byteCapacity(version: version, level: errorCorrection)
    }
}

extension QRCode {
    /// The ISO/IEC 18004 penalty of the finished symbol; the encoder picks the mask minimising it.
    var penaltyScore: Int {
        var matrix = QRMatrix(version: version)
        matrix.modules = modules
        return matrix.score()
    }
}

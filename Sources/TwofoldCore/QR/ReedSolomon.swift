/// Reed–Solomon error-correction codewords over GF(2⁸) with the QR polynomial
/// x⁸ + x⁴ + x³ + x² + 1 (0x11D), ISO/IEC 18004 §7.5.2.
struct ReedSolomon {
    let generator: [UInt8]

    /// The generator polynomial of `degree`: ∏ (x − αⁱ) for i in 0..<degree, leading 1 dropped.
    init(degree: Int) {
        precondition((1...255).contains(degree))
        var coefficients = [UInt8](repeating: 0, count: degree)
        coefficients[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for index in 0..<degree {
                coefficients[index] = Self.multiply(coefficients[index], root)
                if index + 1 < degree { coefficients[index] ^= coefficients[index + 1] }
            }
            root = Self.multiply(root, 0x02)
        }
        generator = coefficients
    }

    /// The remainder of `data` · x^degree divided by the generator: the ECC codewords.
    func remainder(of data: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: generator.count)
        for byte in data {
            let factor = byte ^ result[0]
            result.removeFirst()
            result.append(0)
            for index in 0..<result.count {
                result[index] ^= Self.multiply(generator[index], factor)
            }
        }
        return result
    }

    /// Multiplication in GF(2⁸) modulo 0x11D (Russian-peasant, no tables to get wrong).
    static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
        var result: UInt16 = 0
        for bit in stride(from: 7, through: 0, by: -1) {
            result = (result << 1) ^ ((result >> 7) * 0x11D)
            result ^= UInt16((y >> UInt8(bit)) & 1) * UInt16(x)
        }
        return UInt8(truncatingIfNeeded: result)
    }
}

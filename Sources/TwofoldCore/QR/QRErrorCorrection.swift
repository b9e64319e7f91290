/// How much of a QR symbol can be damaged and still read: about 7 %, 15 %, 25 % or 30 %
/// (ISO/IEC 18004 §6.5.1).
public enum QRErrorCorrection: String, CaseIterable, Sendable {
    case low = "L"
    case medium = "M"
    case quartile = "Q"
    case high = "H"

    /// The two bits this level contributes to the format information (ISO/IEC 18004 Table 12).
    var formatBits: Int {
        switch self {
        case .low: return 1
        case .medium: return 0
        case .quartile: return 3
        case .high: return 2
        }
    }

    /// Row index into the tables of `QRTables`.
    var tableIndex: Int {
        switch self {
        case .low: return 0
        case .medium: return 1
        case .quartile: return 2
        case .high: return 3
        }
    }
}

import ArgumentParser
import Foundation
import TwofoldCore

struct QRCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "qr", abstract: "Draw TEXT as a QR code in the terminal, or write it as SVG.")

    @Argument(help: "The text to encode, e.g. an otpauth:// URI.")
    var text: String

    @Option(help: "Write an SVG file here instead of drawing in the terminal.")
    var svg: String?

    @Option(help: "Error correction: L, M, Q or H.")
    var level: String = "M"

    @Flag(help: "Draw for a terminal with dark text on a light background.")
    var lightBackground = false

    func run() throws {
        guard let correction = QRErrorCorrection(rawValue: level.uppercased()) else {
            throw ValidationError("--level must be L, M, Q or H, not \(level)")
        }
        let code: QRCode
        do { code = try QRCode(text: text, errorCorrection: correction) } catch {
            throw ValidationError(error.description)
        }
        if let svg {
            try Data(code.svg().utf8).write(to: URL(fileURLWithPath: svg))
        } else {
            print(code.terminalString(darkOnLight: lightBackground))
        }
    }
}

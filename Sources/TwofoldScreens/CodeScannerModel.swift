import Foundation
import Observation
import TwofoldClient

/// What the camera reads: each QR code's text as it comes into view (VisionKit's
/// `DataScannerViewController` on a phone, `VisionKitCodeScanner`; a list in the tests).
public protocol CodeScanning: Sendable {
    /// Whether this device can scan now (a camera, and the person allowed it).
    var isAvailable: Bool { get async }
    /// The codes seen, in order, until scanning stops (the stream ends, or the reader is
    /// cancelled).
    func codes() -> AsyncStream<String>
}

/// Seed 000's QR scanner: the camera reads codes until one is a link this app opens (a
/// `twofold://` link, the recovery email's link, an `otpauth://` URI), then it is done and the
/// link goes where `AppModel.open` sends it; a code that is not one says so and scanning goes
/// on. "Enter manually" takes the same text typed or pasted, for a code the camera cannot read.
@MainActor @Observable
public final class CodeScannerModel {
    /// Where the scanner stands.
    public enum Phase: Equatable, Sendable {
        /// The camera is reading.
        case scanning
        /// No camera, or the person has not allowed it: only "Enter manually" is left.
        case unavailable
        /// The person types or pastes the code's text.
        case manual
        /// A code was read; the scanner closes by itself.
        case found(DeepLink)
    }

    /// Where the scanner stands.
    public private(set) var phase: Phase = .scanning
    /// Why the last code was not taken, in words.
    public private(set) var problem: String?
    /// What the person typed under "Enter manually".
    public var typed = ""
    private let scanner: (any CodeScanning)?
    private let server: URL?

    /// A scanner reading `scanner`'s codes (none: manual entry only) for the app of `server`
    /// (the recovery email's web link counts only from it).
    public init(scanner: (any CodeScanning)?, server: URL?) {
        (self.scanner, self.server) = (scanner, server)
    }

    /// Reads codes until one is a link this app opens (call it as the camera view appears; it
    /// ends with the view's task).
    public func scan() async {
        guard let scanner, await scanner.isAvailable else {
            phase = .unavailable
            return
        }
        phase = .scanning
        for await text in scanner.codes() {
            if take(text) { return }
        }
    }

    /// "Enter manually".
    public func enterManually() {
        problem = nil
        phase = .manual
    }

    /// Takes what was typed.
    public func submitTyped() {
        guard phase == .manual else { return }
        _ = take(typed)
    }

    /// Whether `text` is a link this app opens: then it is the scanner's result.
    private func take(_ text: String) -> Bool {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= 4096, let url = URL(string: trimmed), let link = DeepLink.parse(url, server: server)
        else {
            problem = "Twofold can't use this code. It reads Twofold links and authenticator setup codes."
            return false
        }
        problem = nil
        phase = .found(link)
        return true
    }
}

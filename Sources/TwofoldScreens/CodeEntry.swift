import Foundation
import TwofoldAPI
import TwofoldCore

/// Seed 000's code input: six digits for an authenticator, SMS or email code, eight for a backup
/// code (`XXXX-XXXX`, letters and digits), typed or pasted. Pasting keeps what belongs in a code
/// and drops the rest (spaces, dashes, "Your code is"), so a whole message pasted still works.
public struct CodeEntry: Sendable, Equatable {
    /// How many characters the code has.
    public let length: Int
    /// Whether letters belong in the code (backup codes), or digits only.
    public let allowsLetters: Bool
    /// What has been typed so far, cleaned: at most `length` characters that belong in the code.
    public private(set) var text = ""

    /// An entry for `length` characters, letters allowed or not.
    public init(length: Int = 6, allowsLetters: Bool = false) {
        (self.length, self.allowsLetters) = (length, allowsLetters)
    }

    /// The entry a method's code needs: eight letters and digits for a backup code, six digits otherwise.
    public init(for method: FactorMethod) {
        self = method == .backup ? CodeEntry(length: BackupCodes.length, allowsLetters: true) : CodeEntry()
    }

    /// Whether the code has all its characters.
    public var isComplete: Bool { text.count == length }

    /// Takes what was typed (or pasted) as the whole field's new content.
    public mutating func update(_ typed: String) {
        text = String(Self.keep(typed, letters: allowsLetters).prefix(length))
    }

    /// Takes pasted text: a digits-only code is found inside a longer message ("Your Twofold code
    /// is 123456."); otherwise as typed.
    public mutating func paste(_ pasted: String) {
        if !allowsLetters {
            let digitRuns = pasted.split { !($0.isASCII && $0.isNumber) }
            if let run = digitRuns.first(where: { $0.count == length }) {
                text = String(run)
                return
            }
        }
        update(pasted)
    }

    /// Empties the field (after a wrong code).
    public mutating func clear() { text = "" }

    /// Whether the input hides what is typed (seed 002: a backup code is a secret that works
    /// once; the last character typed stays readable, as iOS shows a password's).
    public var isMasked: Bool { allowsLetters }

    /// The characters one cell of a segmented input shows (`nil` past what was typed).
    public func character(at index: Int) -> Character? {
        index < text.count ? Array(text)[index] : nil
    }

    /// What one cell shows: `character(at:)`, or `•` for a masked entry's characters before the
    /// last one typed.
    public func shown(at index: Int) -> Character? {
        guard let character = character(at: index) else { return nil }
        return isMasked && index < text.count - 1 ? "•" : character
    }

    /// What the entry shows in one line (`shown(at:)` for every character typed).
    public var shownText: String { String((0..<text.count).compactMap(shown(at:))) }

    /// The code as the server takes it: a backup code in its `XXXX-XXXX` form.
    public var submission: String {
        guard allowsLetters, text.count == length else { return text }
        return CodeFormatter.display(text.uppercased(), separator: "-")
    }

    private static func keep(_ typed: String, letters: Bool) -> String {
        String(typed.filter { $0.isASCII && ($0.isNumber || (letters && $0.isLetter)) })
    }
}

/// What a screen asks the phone to make felt: a view turns each new event into a haptic (a
/// success tap, an error buzz). `id` grows with each event, so the same kind twice is felt twice.
public struct Feedback: Sendable, Equatable {
    /// A success or an error.
    public enum Kind: Sendable, Equatable { case success, error }
    /// Which feedback.
    public let kind: Kind
    /// Counts the events of the model that made it.
    public let id: Int
}

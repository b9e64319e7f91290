import Foundation
import TwofoldClient

/// Where a scenario reads the one-time codes the server sends (by SMS): a person typing what
/// the server's console shows, or the CLI's listener for the server's signed SMS webhook.
public protocol CodeInbox: Sendable {
    /// Runs `trigger` (the request that makes the server send a code to `destination`) and gives
    /// back the code that reached `destination` after it.
    func code(to destination: String, sentBy trigger: @Sendable () async throws -> Void) async throws -> String
}

/// No code came in time, or none could be read.
public struct NoCodeArrived: Error, Sendable, CustomStringConvertible {
    /// The number the code was to reach.
    public let destination: String
    /// How long was waited, in seconds.
    public let waited: TimeInterval
    /// What did not arrive, the number masked.
    public var description: String {
        "no code reached \(PhoneMask.masked(destination)) within \(Int(waited)) seconds"
    }
}

/// The code in a message's text: its first word that starts with six digits.
public enum OneTimeCodeText {
    /// The first six digits of `text`'s first word that starts with six, or `nil` when no word does.
    public static func code(in text: String) -> String? {
        let words: [Substring] = text.split(whereSeparator: { (character: Character) in character.isWhitespace })
        return words.first { $0.count >= 6 && $0.prefix(6).allSatisfy { $0.isASCII && $0.isNumber } }
            .map { String($0.prefix(6)) }
    }
}

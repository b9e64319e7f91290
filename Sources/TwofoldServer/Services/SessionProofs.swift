import Foundation
import TwofoldAPI

/// The names a session's proofs are recorded under, and their stored form.
///
/// A proof is named by what was proven: `password`, `totp`, `backup`, `sms`, `email`, or one
/// credential, `webauthn:<credential ID>` and `deviceKey:<device ID>` (the names
/// `FactorChanges.factorName` gives, so a factor a session added and a proof it gave compare).
/// Each keeps the time it was last proven, so "recent" is asked of each proof, not of the
/// session's latest (issue T).
enum SessionProofs {
    static let password = FactorMethod.password.rawValue
    /// A session a recovery pass began: it proves the email address and a reviewer's approval,
    /// no factor; until the account has a factor again it may only set one up (`RecoveryGate`).
    static let recovery = "recovery"

    /// The kind of a proof: the method named up to the first `:` (`webauthn:abc` → `webauthn`).
    static func kind(_ name: String) -> FactorMethod {
        FactorMethod(rawValue: name.firstIndex(of: ":").map { String(name[..<$0]) } ?? name)
    }

    /// One proof per line, `name=seconds since 1970`; names are never blank and never hold `=`
    /// or a line break (credential and device IDs are base64url or checked device IDs).
    static func encode(_ proofs: [String: Date]) -> String {
        proofs.sorted { $0.key < $1.key }
            .map { "\($0.key)=\(Int64($0.value.timeIntervalSince1970.rounded(.down)))" }
            .joined(separator: "\n")
    }

    /// The stored form read back; a line that does not parse is dropped (fewer proofs is the
    /// safe side). A session from before proofs were recorded has none: it steps up again.
    static func decode(_ text: String?) -> [String: Date] {
        guard let text else { return [:] }
        var proofs: [String: Date] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.lastIndex(of: "="), let seconds = Int64(line[line.index(after: equals)...])
            else { continue }
            let name = String(line[..<equals])
            guard !name.isEmpty else { continue }
            proofs[name] = Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        return proofs
    }
}

import Crypto
import Foundation
import TwofoldAPI

/// One thing a session proved, bound to the credential it proved and that credential's version
/// (issue V item 1): a proof counts only while that credential exists unchanged, so a removed or
/// replaced factor vouches for nothing, whatever else of its kind the account has.
///
/// - `password`, and `recovery` (a recovery pass: the email address and a reviewer's approval);
/// - `totp`, bound to the authenticator-app secret it was checked against (its row);
/// - `webauthn`, one passkey (its credential ID: a passkey is never replaced, only removed);
/// - `deviceKey`, one device's key (the device's ID and a digest of the key it signed with);
/// - `sms` and `email`, a code sent to a destination (a digest of the number or address);
/// - `backup`, one of the account's backup codes (used up as it proves).
struct Proof: Hashable, Sendable, CustomStringConvertible {
    /// What was proven: a factor method, `password` or `recovery`.
    let method: FactorMethod
    /// Which credential of the method: a passkey's credential ID, a device's ID; `nil` for the
    /// methods an account has one of.
    let credential: String?
    /// Which version of the credential: the TOTP secret's ID, the digest of a device's key, of a
    /// phone number or of an email address; `nil` where the credential is its own version.
    let version: String?

    init(method: FactorMethod, credential: String? = nil, version: String? = nil) {
        self.method = method
        self.credential = credential
        self.version = version
    }

    static let password = Proof(method: .password)
    static let recovery = Proof(method: FactorMethod(rawValue: "recovery"))
    static let backup = Proof(method: .backup)

    static func totp(secretID: UUID) -> Proof { Proof(method: .totp, version: secretID.uuidString) }

    static func passkey(_ credentialID: String) -> Proof { Proof(method: .webauthn, credential: credentialID) }

    /// A device's key, as it was when it signed (`publicKey`: the stored base64 form).
    static func deviceKey(_ deviceID: String, publicKey: String) -> Proof {
        Proof(method: .deviceKey, credential: deviceID, version: digest("key", publicKey))
    }

    /// A code sent to `destination` by `channel` proves that destination.
    static func code(_ channel: DeliveryChannel, to destination: String) -> Proof {
        Proof(method: channel.method, version: digest(channel.method.rawValue, destination))
    }

    /// Whether this proof needs a version to count: one recorded before proofs were bound
    /// (`totp`, `sms`, … alone) names no version, and counts for nothing.
    var isBound: Bool { [.totp, .deviceKey, .sms, .email].contains(method) }

    /// A proof recorded before proofs were bound: it counts for nothing, and the removal of its
    /// factor ends its session as it would a bound one's.
    var isUnbound: Bool { isBound && version == nil }

    /// The factor this proves, without its version: `totp`, `sms`, `email`, `backup`,
    /// `password`, `webauthn:<credential ID>`, `deviceKey:<device ID>` — the names a session's
    /// added factors and a removal are given in (`FactorChanges.factorName`).
    var factor: String { credential.map { "\(method.rawValue):\($0)" } ?? method.rawValue }

    /// The stored form: the factor, then `#` and the version when there is one.
    var description: String { version.map { "\(factor)#\($0)" } ?? factor }

    /// Reads the stored form back. The version is after the last `#` (versions are hex or UUIDs,
    /// never `#`; a device ID may hold one), the method before the first `:`. Split on Unicode
    /// scalars, not characters: a device ID ending in a prepending mark (or starting with a
    /// combining one) would otherwise join the separator into one character and hide it.
    init?(stored text: Substring) {
        let scalars = text.unicodeScalars
        guard !scalars.isEmpty else { return nil }
        var name = scalars[...]
        var version: String?
        if let hash = scalars.lastIndex(of: "#") {
            version = String(scalars[scalars.index(after: hash)...])
            name = scalars[..<hash]
        }
        let method: FactorMethod
        var credential: String?
        if let colon = name.firstIndex(of: ":") {
            method = FactorMethod(rawValue: String(name[..<colon]))
            credential = String(name[name.index(after: colon)...])
        } else {
            method = FactorMethod(rawValue: String(name))
        }
        guard !method.rawValue.isEmpty, version?.isEmpty != true else { return nil }
        self.init(method: method, credential: credential, version: version)
    }

    /// 128 bits of SHA-256 over what a version stands for, in hex: equal for the same key or
    /// destination. Not a secret (a phone number's could be found by trying them all); the
    /// number and address are in the account's own row anyway.
    private static func digest(_ purpose: String, _ value: String) -> String {
        SHA256.hash(data: Data("\(purpose)\n\(value)".utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
    }
}

/// A session's proofs in their stored form, and when each was last given: "recent" is asked of
/// each proof, not of the session's latest (issue T).
enum SessionProofs {
    /// One proof per line, `proof=seconds since 1970` (`Proof.description`; a proof holds no
    /// line break, and the time is after the last `=`).
    static func encode(_ proofs: [Proof: Date]) -> String {
        proofs.map { ("\($0.key)", $0.value) }.sorted { $0.0 < $1.0 }
            .map { "\($0.0)=\(Int64($0.1.timeIntervalSince1970.rounded(.down)))" }
            .joined(separator: "\n")
    }

    /// The stored form read back; a line that does not parse is dropped (fewer proofs is the
    /// safe side). A session from before proofs were recorded has none: it steps up again.
    static func decode(_ text: String?) -> [Proof: Date] {
        guard let text else { return [:] }
        var proofs: [Proof: Date] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.lastIndex(of: "="), let seconds = Int64(line[line.index(after: equals)...]),
                let proof = Proof(stored: line[..<equals])
            else { continue }
            proofs[proof] = Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        return proofs
    }
}

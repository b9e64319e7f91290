import Foundation
import SwiftASN1
import WebAuthn
import X509

/// Passkey settings (`TWOFOLD_WEBAUTHN_*`): who the relying party is, which origins may use it,
/// and what it asks of authenticators. The defaults serve `swift run twofold-server` opened at
/// `http://localhost:<port>`; production refuses to start without an explicit RP ID and HTTPS
/// origins.
public struct WebAuthnSettings: Sendable {
    /// What the options ask for as `attestation`.
    public enum AttestationPreference: String, Sendable, CaseIterable {
        case none, indirect, direct, enterprise
    }

    /// The RP ID: the registrable domain passkeys are bound to (`TWOFOLD_WEBAUTHN_RP_ID`).
    public var rpID: String
    /// What the browser shows as the site's name (`TWOFOLD_WEBAUTHN_RP_NAME`).
    public var rpName: String
    /// Accepted client origins: web origins and native app origins such as
    /// `android:apk-key-hash:…` (`TWOFOLD_WEBAUTHN_ORIGINS`, comma-separated).
    public var origins: [String]
    /// Top-level origins under which a cross-origin iframe may run a ceremony
    /// (`TWOFOLD_WEBAUTHN_TOP_ORIGINS`); none by default.
    public var topOrigins: [String]
    /// `TWOFOLD_WEBAUTHN_USER_VERIFICATION`: `preferred` (default), `required` or `discouraged`.
    /// A passwordless sign-in always requires it.
    public var userVerification: RelyingParty.UserVerification
    /// `TWOFOLD_WEBAUTHN_ATTESTATION`: `none` by default.
    public var attestation: AttestationPreference
    /// `TWOFOLD_WEBAUTHN_REQUIRE_ATTESTATION`: refuse passkeys whose attestation does not chain to
    /// one of `roots`.
    public var requireAttestation: Bool
    /// Attestation roots, from the PEM file `TWOFOLD_WEBAUTHN_ATTESTATION_ROOTS`.
    public var roots: [Certificate]
    /// How long a challenge lives (`TWOFOLD_WEBAUTHN_CHALLENGE_SECONDS`, 120 by default).
    public var challengeLifetime: TimeInterval
    /// The iOS apps (`<team ID>.<bundle ID>`) whose passkeys are this domain's and which open the
    /// recovery email's link (`TWOFOLD_APPLE_APP_IDS`, comma-separated): what
    /// `/.well-known/apple-app-site-association` lists. None by default (the file is not served).
    public var appleApps: [String]

    public init(
        rpID: String = "localhost", rpName: String = "Twofold", origins: [String] = ["http://localhost:8080"],
        topOrigins: [String] = [], userVerification: RelyingParty.UserVerification = .preferred,
        attestation: AttestationPreference = .none, requireAttestation: Bool = false, roots: [Certificate] = [],
        challengeLifetime: TimeInterval = 120, appleApps: [String] = []
    ) {
        self.rpID = rpID
        self.rpName = rpName
        self.origins = origins
        self.topOrigins = topOrigins
        self.userVerification = userVerification
        self.attestation = attestation
        self.requireAttestation = requireAttestation
        self.roots = roots
        self.challengeLifetime = challengeLifetime
        self.appleApps = appleApps
    }

    /// What a server on `port` accepts when no origins are configured: the page a developer opens.
    static func developmentOrigins(port: Int) -> [String] { ["http://localhost:\(port)"] }

    static func load(_ reader: EnvironmentReader, mode: Configuration.Mode, port: Int) throws(ConfigurationError)
        -> WebAuthnSettings
    {
        let explicitID = reader.optional("TWOFOLD_WEBAUTHN_RP_ID")
        let rpID = (explicitID ?? "localhost").lowercased()
        guard Self.isDomain(rpID) else {
            throw ConfigurationError(
                variable: "TWOFOLD_WEBAUTHN_RP_ID",
                message:
                    "must be a domain name such as example.com (no scheme, port or path), not \(rpID.debugDescription)")
        }
        let rpName = try reader.string("TWOFOLD_WEBAUTHN_RP_NAME", default: "Twofold") { $0.count <= 64 }
        let origins = try originList(reader, "TWOFOLD_WEBAUTHN_ORIGINS") ?? developmentOrigins(port: port)
        let topOrigins = try originList(reader, "TWOFOLD_WEBAUTHN_TOP_ORIGINS") ?? []
        let userVerification = try reader.choice(
            "TWOFOLD_WEBAUTHN_USER_VERIFICATION", default: RelyingParty.UserVerification.preferred)
        let attestation = try reader.choice("TWOFOLD_WEBAUTHN_ATTESTATION", default: AttestationPreference.none)
        let requireAttestation = try reader.boolean("TWOFOLD_WEBAUTHN_REQUIRE_ATTESTATION", default: false)
        var roots: [Certificate] = []
        if let path = reader.optional("TWOFOLD_WEBAUTHN_ATTESTATION_ROOTS") {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8),
                let certificates = try? PEMDocument.parseMultiple(pemString: text).map(Certificate.init(pemDocument:)),
                !certificates.isEmpty
            else {
                throw ConfigurationError(
                    variable: "TWOFOLD_WEBAUTHN_ATTESTATION_ROOTS",
                    message: "must name a readable PEM file of one or more certificates")
            }
            roots = certificates
        }
        if requireAttestation, roots.isEmpty {
            throw ConfigurationError(
                variable: "TWOFOLD_WEBAUTHN_REQUIRE_ATTESTATION",
                message: "is true, but TWOFOLD_WEBAUTHN_ATTESTATION_ROOTS names no roots to verify attestation against")
        }
        let seconds = try reader.integer("TWOFOLD_WEBAUTHN_CHALLENGE_SECONDS", default: 120, in: 30...600)
        let appleApps = try appleAppIDs(reader)
        if mode == .production {
            guard explicitID != nil else {
                throw ConfigurationError(
                    variable: "TWOFOLD_WEBAUTHN_RP_ID",
                    message: "must be set in production: passkeys are bound to it and cannot move later")
            }
            if let plain = origins.first(where: { $0.hasPrefix("http://") }) {
                throw ConfigurationError(
                    variable: "TWOFOLD_WEBAUTHN_ORIGINS",
                    message: "must list HTTPS origins in production, not \(plain)")
            }
        }
        return WebAuthnSettings(
            rpID: rpID, rpName: rpName, origins: origins, topOrigins: topOrigins, userVerification: userVerification,
            attestation: attestation, requireAttestation: requireAttestation, roots: roots,
            challengeLifetime: TimeInterval(seconds), appleApps: appleApps)
    }

    /// `TWOFOLD_APPLE_APP_IDS`: app IDs as Apple writes them, a ten-character team ID, a dot and
    /// the bundle ID (`ABCDE12345.dev.twofold.app`), separated by commas.
    private static func appleAppIDs(_ reader: EnvironmentReader) throws(ConfigurationError) -> [String] {
        guard let text = reader.optional("TWOFOLD_APPLE_APP_IDS") else { return [] }
        let ids = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        for id in ids where id.wholeMatch(of: /[A-Z0-9]{10}\.[A-Za-z0-9][A-Za-z0-9.\-]{0,154}/) == nil {
            throw ConfigurationError(
                variable: "TWOFOLD_APPLE_APP_IDS",
                message: "must be app IDs such as ABCDE12345.dev.twofold.app (the team ID, a dot, the bundle ID), "
                    + "separated by commas; \(id.debugDescription) is not one")
        }
        return ids
    }

    /// A comma-separated list of origins: `http(s)://host[:port]` with nothing after, or a native
    /// app origin (`android:apk-key-hash:…`, `ios:bundle-id:…`).
    private static func originList(_ reader: EnvironmentReader, _ name: String) throws(ConfigurationError)
        -> [String]?
    {
        guard let text = reader.optional(name) else { return nil }
        let origins = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
        for origin in origins where !isOrigin(origin) {
            throw ConfigurationError(
                variable: name,
                message: "must be origins such as https://example.com or android:apk-key-hash:…, separated by "
                    + "commas; \(origin.debugDescription) is not one")
        }
        guard !origins.isEmpty else { throw ConfigurationError(variable: name, message: "lists no origin") }
        return origins
    }

    static func isOrigin(_ text: String) -> Bool {
        for prefix in ["android:apk-key-hash:", "ios:bundle-id:"] where text.hasPrefix(prefix) {
            return text.count > prefix.count && !text.contains(where: \.isWhitespace)
        }
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme),
            let host = url.host, !host.isEmpty
        else { return false }
        let port = url.port.map { ":\($0)" } ?? ""
        return text == "\(scheme)://\(host)\(port)"
    }

    static func isDomain(_ text: String) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return !text.isEmpty && text.count <= 253
            && labels.allSatisfy { label in
                !label.isEmpty && label.count <= 63 && label.first != "-" && label.last != "-"
                    && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
            }
    }

    /// The relying party these settings describe, on `clock`.
    func relyingParty(clock: @escaping @Sendable () -> Date) -> RelyingParty {
        RelyingParty(
            id: rpID, origins: origins, topOrigins: topOrigins, userVerification: userVerification,
            attestationRoots: roots, requireAttestation: requireAttestation, clock: clock)
    }
}

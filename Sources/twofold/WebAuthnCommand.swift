import ArgumentParser
import Foundation
import SwiftASN1
import TwofoldAPI
import TwofoldCore
import WebAuthn
import X509

/// `twofold webauthn`: checks a recorded registration or assertion with Twofold's relying party
/// and prints what it showed, as JSON, so any payload can be checked from the shell.
struct WebAuthnCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webauthn",
        abstract: "Check passkey ceremonies (WebAuthn Level 3) as the server does.",
        subcommands: [VerifyRegistration.self, VerifyAssertion.self]
    )

    /// The relying party and the ceremony's challenge.
    struct Parameters: ParsableArguments {
        @Option(name: .customLong("rp-id"), help: "The RP ID, such as example.com.")
        var rpID: String

        @Option(
            name: .customLong("origin"),
            help: "An accepted origin (https://example.com, android:apk-key-hash:…); repeat for several.")
        var origins: [String]

        @Option(help: "The challenge the server issued, base64url.")
        var challenge: String

        @Option(name: .customLong("user-verification"), help: "required, preferred or discouraged.")
        var userVerification: String = "preferred"

        @Option(
            name: .customLong("response"),
            help: "A file with the client's JSON (PublicKeyCredential.toJSON()); - reads standard input.")
        var response: String = "-"

        func relyingParty(roots: [Certificate] = [], requireAttestation: Bool = false, time: Date? = nil) throws
            -> RelyingParty
        {
            guard let verification = RelyingParty.UserVerification(rawValue: userVerification) else {
                throw ValidationError("--user-verification must be required, preferred or discouraged")
            }
            guard !origins.isEmpty else { throw ValidationError("give at least one --origin") }
            return RelyingParty(
                id: rpID, origins: origins, userVerification: verification, attestationRoots: roots,
                requireAttestation: requireAttestation, clock: { time ?? Date() })
        }

        func challengeBytes() throws -> [UInt8] {
            guard let bytes = Base64URL.decode(challenge), !bytes.isEmpty else {
                throw ValidationError("--challenge must be base64url")
            }
            return bytes
        }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let data: Data
            if response == "-" {
                data = FileHandle.standardInput.readDataToEndOfFile()
            } else {
                guard let read = FileManager.default.contents(atPath: response) else {
                    throw ValidationError("cannot read \(response)")
                }
                data = read
            }
            do { return try Wire.decoder().decode(T.self, from: data) } catch {
                throw ValidationError("the response is not the client's JSON: \(error)")
            }
        }
    }

    static func bytes(_ text: String, _ field: String) throws -> [UInt8] {
        guard let bytes = Base64URL.decode(text) else { throw ValidationError("\(field) is not base64url") }
        return bytes
    }

    /// Prints `object` as one JSON object; a refusal also exits with status 1.
    static func emit(_ object: [String: Any], refused: Bool = false) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        print(String(decoding: data, as: UTF8.self))
        if refused { throw ExitCode(1) }
    }

    static func refusal(_ error: WebAuthnError) -> [String: Any] {
        ["verified": false, "reason": error.reason.rawValue, "message": error.message]
    }

    struct VerifyRegistration: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify-registration",
            abstract: "Check a registration (RegistrationResponseJSON); print the credential or the refusal.")

        @OptionGroup var parameters: Parameters

        @Option(help: "A PEM file of attestation roots to chain the statement to.")
        var roots: String?

        @Flag(help: "Refuse an attestation that does not chain to --roots.")
        var requireAttestation = false

        @Option(help: "Check certificates at this ISO 8601 time instead of now.")
        var time: String?

        @Flag(help: "Waive user presence (a browser's automatic passkey upgrade).")
        var noUserPresence = false

        func run() async throws {
            var certificates: [Certificate] = []
            if let roots {
                guard let text = try? String(contentsOfFile: roots, encoding: .utf8),
                    let parsed = try? PEMDocument.parseMultiple(pemString: text).map(Certificate.init(pemDocument:))
                else { throw ValidationError("--roots must name a PEM file of certificates") }
                certificates = parsed
            }
            let when = try time.map { text in
                guard let date = try? Date(text, strategy: .iso8601) else {
                    throw ValidationError("--time must be ISO 8601, such as 2025-01-01T00:00:00Z")
                }
                return date
            }
            let rp = try parameters.relyingParty(
                roots: certificates, requireAttestation: requireAttestation, time: when)
            let credential = try parameters.decode(RegistrationCredential.self)
            do {
                let verified = try await rp.verifyRegistration(
                    clientDataJSON: try WebAuthnCommand.bytes(credential.response.clientDataJSON, "clientDataJSON"),
                    attestationObject: try WebAuthnCommand.bytes(
                        credential.response.attestationObject, "attestationObject"),
                    challenge: try parameters.challengeBytes(), requireUserPresence: !noUserPresence)
                try verified.check(reportedID: credential.id, rawID: credential.rawId)
                var result: [String: Any] = [
                    "verified": true, "credentialId": Base64URL.encode(verified.id),
                    "publicKey": Base64URL.encode(verified.publicKey), "algorithm": verified.algorithm.name,
                    "format": verified.attestation.format, "attestation": verified.attestation.trust.rawValue,
                    "aaguid": verified.aaguidText, "signCount": verified.signCount,
                    "flags": [
                        "userVerified": verified.userVerified, "backupEligible": verified.backupEligible,
                        "backedUp": verified.backedUp,
                    ],
                ]
                if let note = verified.attestation.note { result["attestationNote"] = note }
                try WebAuthnCommand.emit(result)
            } catch let error as WebAuthnError {
                try WebAuthnCommand.emit(WebAuthnCommand.refusal(error), refused: true)
            }
        }
    }

    struct VerifyAssertion: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify-assertion",
            abstract: "Check an assertion (AuthenticationResponseJSON) against a stored credential.")

        @OptionGroup var parameters: Parameters

        @Option(name: .customLong("public-key"), help: "The credential's COSE public key, base64url.")
        var publicKey: String

        @Option(name: .customLong("sign-count"), help: "The counter stored from the last ceremony.")
        var signCount: UInt32 = 0

        @Flag(help: "The stored credential was backup eligible (BE).")
        var backupEligible = false

        @Flag(help: "The stored credential was backed up (BS).")
        var backedUp = false

        func run() async throws {
            let rp = try parameters.relyingParty()
            let credential = try parameters.decode(AuthenticationCredential.self)
            do {
                let assertion = try rp.verifyAssertion(
                    clientDataJSON: try WebAuthnCommand.bytes(credential.response.clientDataJSON, "clientDataJSON"),
                    authenticatorData: try WebAuthnCommand.bytes(
                        credential.response.authenticatorData, "authenticatorData"),
                    signature: try WebAuthnCommand.bytes(credential.response.signature, "signature"),
                    challenge: try parameters.challengeBytes(),
                    credential: .init(
                        publicKey: try WebAuthnCommand.bytes(publicKey, "--public-key"), signCount: signCount,
                        backupEligible: backupEligible, backedUp: backedUp))
                try WebAuthnCommand.emit([
                    "verified": true, "credentialId": credential.id, "signCount": assertion.signCount,
                    "flags": [
                        "userVerified": assertion.userVerified, "backupEligible": assertion.backupEligible,
                        "backedUp": assertion.backedUp,
                    ],
                    "backupStateChanged": assertion.backupStateChanged,
                ])
            } catch let error as WebAuthnError {
                try WebAuthnCommand.emit(WebAuthnCommand.refusal(error), refused: true)
            }
        }
    }
}

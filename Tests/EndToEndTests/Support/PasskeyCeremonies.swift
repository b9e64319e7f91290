import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport

/// Recorded passkey ceremonies and the software authenticator that answers the server's options.
enum PasskeyCeremonies {
    struct Case: Sendable, CustomTestStringConvertible {
        let library: String
        let alg: String
        let format: String
        /// soft-webauthn sets user presence only: no passwordless sign-in.
        var verifiesUser: Bool { library == "fido2" }
        var testDescription: String { "\(library) \(alg) \(format)" }
    }

    static let cases: [Case] =
        ["ES256", "RS256", "EdDSA"].flatMap { alg in
            ["none", "packed"].map { Case(library: "fido2", alg: alg, format: $0) }
        } + [Case(library: "soft-webauthn", alg: "ES256", format: "none")]

    /// The authenticator: one credential, its key and counter in a state file.
    struct Authenticator {
        let python: ExternalTool
        let directory: URL
        let origin: String
        var state: String { directory.appendingPathComponent("state.json").path }

        func run(_ command: String, options: Data, _ extra: [String] = []) throws -> Data {
            let file = directory.appendingPathComponent("options-\(UUID().uuidString).json")
            try options.write(to: file)
            let script = BuildProducts.repositoryRoot.appendingPathComponent("scripts/soft_authenticator.py").path
            let output = try python.run(
                [script, command, "--state", state, "--options", file.path, "--origin", origin] + extra)
            #expect(output.status == 0, "\(output.errorText)")
            return output.standardOutput
        }
    }

    /// `{ key: <the authenticator's JSON> }` plus string members.
    static func wrap(_ credential: Data, as key: String = "credential", _ members: [String: String] = [:]) throws
        -> Data
    {
        var object: [String: Any] = members
        object[key] = try JSONSerialization.jsonObject(with: credential)
        return try JSONSerialization.data(withJSONObject: object)
    }

    static func methods(_ server: ServerProcess, token: String) async throws -> [String]? {
        try await server.client.send(API.Auth.sessions, bearer: token).sessions.first { $0.current }?.methods
    }
}

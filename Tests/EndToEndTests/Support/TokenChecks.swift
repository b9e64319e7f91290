import Crypto
import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldTestSupport

/// Access tokens checked by an independent verifier (PyJWT), and the sign-ins that make them.
enum TokenChecks {
    /// The virtualenv's Python with PyJWT (`scripts/test` makes it), or `nil` after recording why.
    static func python() -> ExternalTool? { TestPython.find() }

    static func verify(_ token: String, on server: ServerProcess, later: Int? = nil) throws -> ExternalTool.Output? {
        guard let python = python() else { return nil }
        let script = BuildProducts.repositoryRoot.appendingPathComponent("scripts/verify_jwt.py").path
        var arguments = [
            script, server.baseURL.appendingPathComponent(API.Operations.jwks.path()).absoluteString, token,
        ]
        if let later { arguments += ["--later", String(later)] }
        return try python.run(arguments)
    }

    /// Registers `name` (unless an earlier call did) and signs in with the password alone.
    static func signIn(_ server: ServerProcess, as name: String) async throws -> AuthTokensResponse {
        let client = server.client
        do {
            _ = try await client.send(
                API.Auth.register,
                RegisterRequest(username: name, email: "\(name)@example.com", password: TestAccounts.password))
        } catch let error as APIError where error.status == 409 {
            // Registered by an earlier call: sign that account in.
        }
        return try await client.send(
            API.Auth.login, LoginRequest(username: name, password: TestAccounts.password)
        ).tokens
    }

    /// `token` with its claims changed by `change` and signed again with `key` (ES256, same header).
    static func resign(
        _ token: String, with key: P256.Signing.PrivateKey, _ change: (inout [String: Any]) -> Void
    ) throws -> String {
        let parts = token.split(separator: ".").map(String.init)
        func decode(_ text: String) throws -> Data {
            var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            return try #require(Data(base64Encoded: base64))
        }
        func encode(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        var claims = try #require(try JSONSerialization.jsonObject(with: try decode(parts[1])) as? [String: Any])
        change(&claims)
        let input = parts[0] + "." + encode(try JSONSerialization.data(withJSONObject: claims))
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + encode(signature.rawRepresentation)
    }
}

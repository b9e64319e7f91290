import Foundation
import Vapor

/// `twofold-server keys rotate`: retires the token-signing key and makes a new one. Retired keys
/// keep verifying (and stay in the JWKS) until every token they signed has expired; restart the
/// servers to pick up the new key.
struct KeysCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Argument(name: "action", help: "rotate")
        var action: String
    }

    var help: String { "Manages the token-signing keys: keys rotate" }

    func run(using context: CommandContext, signature: Signature) async throws {
        guard signature.action == "rotate" else {
            throw CommandError("unknown action \(signature.action.debugDescription); use `keys rotate`")
        }
        let app = context.application
        let directory = DataDirectory(url: app.twofold.configuration.dataDirectory)
        try directory.rotateSigningKey(now: app.twofold.clock.now())
        let kid = TokenService.keyID(for: try directory.signingKey().publicKey)
        context.console.print("New signing key \(kid); restart the servers to start using it.")
    }
}

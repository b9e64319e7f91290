import Crypto
import Foundation
import NIOPosix
import Vapor

/// bcrypt password hashes, computed on a thread pool so the event loops keep answering while
/// logins hash in parallel.
///
/// The password is first reduced to base64(SHA-256(password)) — 44 ASCII bytes — because bcrypt
/// reads only the first 72 bytes of its input and stops at a NUL byte; pre-hashing keeps every
/// character of a long passphrase significant.
struct PasswordHasher: Sendable {
    let cost: Int
    let threadPool: NIOThreadPool
    /// A hash of a random password at the configured cost, checked when the account does not
    /// exist so that unknown and known users take the same time.
    let dummyHash: String

    init(cost: Int, threadPool: NIOThreadPool) throws {
        self.cost = cost
        self.threadPool = threadPool
        self.dummyHash = try Bcrypt.hash(Self.prehash(SecureToken.generate()), cost: cost)
    }

    static func prehash(_ password: String) -> String {
        Data(SHA256.hash(data: Data(password.utf8))).base64EncodedString()
    }

    func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await threadPool.runIfActive { try Bcrypt.hash(Self.prehash(password), cost: cost) }
    }

    /// `true` when `password` matches `hash`; with `hash == nil` checks against the dummy hash
    /// and returns `false`, taking the same time.
    func verify(_ password: String, against hash: String?) async throws -> Bool {
        let target = hash ?? dummyHash
        let matches = try await threadPool.runIfActive { try Bcrypt.verify(Self.prehash(password), created: target) }
        return matches && hash != nil
    }
}

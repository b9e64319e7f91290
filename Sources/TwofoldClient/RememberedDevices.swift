import Foundation
import TwofoldAPI

/// Where "remember this device" keeps its tokens, per server and account on this device: the
/// Keychain on a phone (the iOS issue), an owner-only file for the command-line tool, memory in
/// tests. A token lets its account's next password sign-in here skip the second step, until it
/// expires or the account's owner forgets the device; it is a secret, sent to its own server
/// only (a password typed for another server never travels with it).
public protocol RememberedDeviceStore: Sendable {
    /// The token kept for `account` (a username or email address, in any case) at `server` (an
    /// origin, `APIClient.origin`), if any.
    func token(for account: String, at server: String) async -> String?
    /// Keeps `token` for each of `accounts` at `server` (the username and the email address: a
    /// person signs in with either).
    func keep(_ token: String, for accounts: [String], at server: String) async throws
}

extension RememberedDeviceStore {
    static func key(_ account: String, _ server: String) -> String { server + " " + account.lowercased() }
}

/// Tokens in memory, for tests and previews.
public actor MemoryRememberedDevices: RememberedDeviceStore {
    /// The tokens kept, by server and account.
    public private(set) var tokens: [String: String] = [:]

    /// A store holding no token.
    public init() {}

    /// The token kept for `account` at `server`, if any.
    public func token(for account: String, at server: String) -> String? { tokens[Self.key(account, server)] }

    /// Keeps `token` for each of `accounts` at `server`.
    public func keep(_ token: String, for accounts: [String], at server: String) {
        for account in accounts { tokens[Self.key(account, server)] = token }
    }
}

/// Tokens in one owner-only file (`PrivateFile`: 0600, refused when others may read it), for the
/// command-line tool.
public struct FileRememberedDevices: RememberedDeviceStore {
    /// The file the tokens are kept in.
    public let file: URL

    /// Tokens kept in `file` (made when the first token is kept).
    public init(file: URL) { self.file = file }

    private func all() throws -> [String: String] {
        try PrivateFile(file).read().map { try JSONDecoder().decode([String: String].self, from: $0) } ?? [:]
    }

    /// A file that cannot be read (or is not private) holds no token this client trusts.
    public func token(for account: String, at server: String) -> String? { (try? all())?[Self.key(account, server)] }

    /// Keeps `token` for each of `accounts` at `server`; throws when the file cannot be written.
    public func keep(_ token: String, for accounts: [String], at server: String) throws {
        var tokens = (try? all()) ?? [:]
        for account in accounts { tokens[Self.key(account, server)] = token }
        try PrivateFile(file).write(try JSONEncoder().encode(tokens))
    }
}

import Foundation
import TwofoldAPI

/// Where "remember this device" keeps its tokens, per account on this device: the Keychain on a
/// phone (the iOS issue), an owner-only file for the command-line tool, memory in tests. A token
/// lets its account's next password sign-in here skip the second step, until it expires or the
/// account's owner forgets the device; it is a secret.
public protocol RememberedDeviceStore: Sendable {
    /// The token kept for `account` (a username or email address, in any case), if any.
    func token(for account: String) async -> String?
    /// Keeps `token` for each of `accounts` (the username and the email address: a person signs
    /// in with either).
    func keep(_ token: String, for accounts: [String]) async throws
}

extension RememberedDeviceStore {
    static func key(_ account: String) -> String { account.lowercased() }
}

/// Tokens in memory, for tests and previews.
public actor MemoryRememberedDevices: RememberedDeviceStore {
    public private(set) var tokens: [String: String] = [:]

    public init() {}

    public func token(for account: String) -> String? { tokens[Self.key(account)] }

    public func keep(_ token: String, for accounts: [String]) {
        for account in accounts { tokens[Self.key(account)] = token }
    }
}

/// Tokens in one owner-only file (`PrivateFile`: 0600, refused when others may read it), for the
/// command-line tool.
public struct FileRememberedDevices: RememberedDeviceStore {
    public let file: URL

    public init(file: URL) { self.file = file }

    private func all() throws -> [String: String] {
        try PrivateFile(file).read().map { try JSONDecoder().decode([String: String].self, from: $0) } ?? [:]
    }

    /// A file that cannot be read (or is not private) holds no token this client trusts.
    public func token(for account: String) -> String? { (try? all())?[Self.key(account)] }

    public func keep(_ token: String, for accounts: [String]) throws {
        var tokens = (try? all()) ?? [:]
        for account in accounts { tokens[Self.key(account)] = token }
        try PrivateFile(file).write(try JSONEncoder().encode(tokens))
    }
}

import Foundation
import TwofoldAPI

/// What a signed-in client keeps between launches: the two tokens and whose they are.
public struct StoredSession: Codable, Sendable, Equatable {
    /// The access token, with its expiry.
    public var accessToken: TokenDTO
    /// The refresh token, with its expiry.
    public var refreshToken: TokenDTO
    /// The signed-in user.
    public var user: UserDTO
    /// One sign-in's mark, kept through its refreshes: a refresh that finishes after a newer
    /// sign-in (another mark) or a sign-out (none) changes nothing.
    public var signIn: UUID
    /// When, by this device's clock, the access token is refreshed: ahead of its expiry by a
    /// minute, or by half its life when that is shorter (a server may hand out one-minute
    /// tokens), so a token just received is never already due.
    public var refreshAt: Date
    /// The server the session belongs to (`APIClient.origin`: scheme, host and port). A manager
    /// for another server never uses it, so its tokens are never sent there. `nil` in sessions
    /// kept before it was recorded.
    public var server: String?

    /// A session of the two tokens for `user`, received at `receivedAt` (which sets `refreshAt`); `signIn`
    /// marks the sign-in it comes from (a new one unless given); `server` is the origin it belongs to.
    public init(
        accessToken: TokenDTO, refreshToken: TokenDTO, user: UserDTO, signIn: UUID = UUID(), receivedAt: Date = Date(),
        server: String? = nil
    ) {
        (self.accessToken, self.refreshToken, self.user, self.signIn, self.server) =
            (accessToken, refreshToken, user, signIn, server)
        refreshAt = Self.refreshTime(for: accessToken, receivedAt: receivedAt)
    }

    /// `refreshAt` for `token` received at `receivedAt`.
    static func refreshTime(for token: TokenDTO, receivedAt: Date, ahead: TimeInterval = 60) -> Date {
        let life = max(0, token.expiresAt.timeIntervalSince(receivedAt))
        return receivedAt.addingTimeInterval(life - min(ahead, life / 2))
    }

    /// A new sign-in's session from the server's tokens.
    public init(_ tokens: AuthTokensResponse, receivedAt: Date = Date()) {
        self.init(
            accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, user: tokens.user,
            receivedAt: receivedAt)
    }
}

/// The store cannot be read now, though it may hold a session: a phone locked since it started
/// keeps its Keychain closed until the first unlock. Not the same as "signed out".
public struct TokenStoreNotReadableYet: Error, Sendable, Equatable {
    /// The error: the store may be read once the phone is unlocked.
    public init() {}
}

/// A token file that someone other than its owner may read or write: not used.
public struct TokenFileNotPrivate: Error, Sendable, Equatable, CustomStringConvertible {
    /// The token file's path.
    public let path: String
    /// The path, and what to do about it.
    public var description: String { "\(path) may be read or written by others; remove it and sign in again" }

    /// The token file at `path` is not its owner's alone.
    public init(path: String) { self.path = path }
}

/// Where the session is kept: the Keychain on Apple platforms, an owner-only file for the
/// command-line tool, memory in tests.
public protocol TokenStore: Sendable {
    /// The stored session, `nil` when there is none; throws `TokenStoreNotReadableYet` when the
    /// store cannot be read yet.
    func load() async throws -> StoredSession?
    /// Keeps `session` in place of any stored before.
    func save(_ session: StoredSession) async throws
    /// Removes the stored session (nothing stored is not an error).
    func clear() async throws
    /// Whether other processes may use the same store (a file two runs of the command-line tool
    /// share): a refresh then runs `exclusively`, reads the store first, and stores its pair
    /// before letting go. `false` by default.
    var isShared: Bool { get }
    /// Runs `body` while no other process sharing the store runs it. By default, at once.
    func exclusively<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T
}

extension TokenStore {
    /// Not shared, by default.
    public var isShared: Bool { false }
    /// Runs `body` at once: a store no other process shares needs no lock.
    public func exclusively<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T { try await body() }
}

extension StoredSession {
    /// This session with the pair a refresh answered at `receivedAt`.
    func rotated(_ pair: RefreshResponse, receivedAt: Date) -> StoredSession {
        var next = self
        next.accessToken = pair.accessToken
        next.refreshToken = pair.refreshToken
        next.refreshAt = StoredSession.refreshTime(for: pair.accessToken, receivedAt: receivedAt)
        return next
    }
}

/// Another process held the session file's lock for too long.
public struct TokenStoreBusy: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path of the lock file.
    public let path: String
    /// The path, and that another process held it.
    public var description: String { "\(path) stayed locked by another process" }

    /// The token file at `path` stayed locked.
    public init(path: String) { self.path = path }
}

/// A store in memory, for tests and previews; `readable` false plays a phone not yet unlocked.
public actor MemoryTokenStore: TokenStore {
    /// The session stored now.
    public private(set) var session: StoredSession?
    /// Whether the store can be read and written; `false` plays a phone locked since it started.
    public var readable = true

    /// A store holding `session`, if given.
    public init(_ session: StoredSession? = nil) { self.session = session }

    /// The stored session; throws `TokenStoreNotReadableYet` while not `readable`.
    public func load() throws -> StoredSession? {
        guard readable else { throw TokenStoreNotReadableYet() }
        return session
    }

    /// Keeps `session`; throws `TokenStoreNotReadableYet` while not `readable`.
    public func save(_ session: StoredSession) throws {
        guard readable else { throw TokenStoreNotReadableYet() }
        self.session = session
    }

    /// Removes the stored session; throws `TokenStoreNotReadableYet` while not `readable`.
    public func clear() throws {
        guard readable else { throw TokenStoreNotReadableYet() }
        session = nil
    }

    /// Makes the store readable or not (the phone unlocked, or not yet).
    public func setReadable(_ readable: Bool) { self.readable = readable }
}

/// A store in one file that only its owner may read or write (mode 0600; a folder it makes is
/// 0700), for the command-line tool. Written whole to a temporary file and renamed over the old
/// one, so a crash leaves the old session or the new, never half of one.
public struct FileTokenStore: TokenStore {
    /// The session's file.
    public let file: URL

    /// A store in `file` (made at the first save).
    public init(file: URL) { self.file = file }

    /// Reads the session; a file others may read or write is refused (`TokenFileNotPrivate`),
    /// never trusted.
    public func load() throws -> StoredSession? {
        let data: Data?
        do {
            data = try PrivateFile(file).read()
        } catch is PrivateFile.NotPrivate {
            throw TokenFileNotPrivate(path: file.path)
        }
        return try data.map { try Wire.decoder().decode(StoredSession.self, from: $0) }
    }

    /// Writes the session (mode 0600, `PrivateFile`). The folder is made owner-only when this
    /// store makes it; a folder that exists already (a home folder, `/tmp`) is left as it is.
    public func save(_ session: StoredSession) throws {
        try PrivateFile(file).write(try Wire.encoder().encode(session))
    }

    /// Deletes the file; no file is not an error.
    public func clear() throws {
        guard FileManager.default.fileExists(atPath: file.path) else { return }
        try FileManager.default.removeItem(at: file)
    }

    /// Two runs of the tool share the file: a refresh by one must not present the refresh token
    /// the other just spent (the server takes that for a stolen token and ends the session).
    public var isShared: Bool { true }

    /// How long a refresh waits for another process's.
    static let lockWait: Duration = .seconds(30)

    /// Runs `body` holding an exclusive `flock(2)` on `<file>.lock` (0600, beside the file), which
    /// the system lets go if the process dies.
    public func exclusively<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        let lock = try PrivateFile.Lock(path: file.path + ".lock")
        defer { lock.release() }
        try await lock.acquire(within: Self.lockWait)
        return try await body()
    }
}

extension StoredSession: RedactedDescription {}

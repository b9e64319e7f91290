import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file only its owner may read or write, for secrets the command-line tool keeps (the
/// session, the virtual phone's private keys): read only when it is the owner's and mode 0600
/// (or stricter), written whole to a new file created 0600 from its first byte and renamed over
/// the old one, so a crash leaves the old contents or the new and no other user ever reads them.
public struct PrivateFile: Sendable {
    /// Where the file is.
    public let url: URL

    /// The private file at `url` (nothing is read or written yet).
    public init(_ url: URL) { self.url = url }

    /// The file others may read or write, or that another user owns: its contents are not
    /// trusted.
    public struct NotPrivate: Error, Sendable, Equatable, CustomStringConvertible {
        /// The file's path.
        public let path: String
        /// The path, and what to do about it.
        public var description: String { "\(path) may be read or written by others; remove it" }
    }

    /// The contents, `nil` when there is no file; throws `NotPrivate` for a file that is not
    /// the owner's alone (a symbolic link included: it is not followed).
    public func read() throws -> Data? {
        // Opened without following a link, then checked and read through the same descriptor:
        // nothing can swap the file between the check and the read.
        // Non-blocking: a FIFO put in its place must not hold the reader forever.
        let descriptor = open(url.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw NotPrivate(path: url.path) }
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        guard status.st_mode & S_IFMT == S_IFREG, status.st_mode & 0o077 == 0, status.st_uid == getuid() else {
            throw NotPrivate(path: url.path)
        }
        return try handle.readToEnd() ?? Data()
    }

    /// Replaces the contents with `data`. The folder is made 0700 when this makes it; a folder
    /// that exists already is left as it is.
    public func write(_ data: Data) throws {
        let folder = url.deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: folder.path) {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
        // Created 0600 and exclusively: never readable by others, never through a link.
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let written = writeAll(data, to: descriptor)
        let code = errno
        let synced = fsync(descriptor) == 0
        close(descriptor)
        // rename(2) replaces the old file in one step.
        guard written, synced, rename(temporary.path, url.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw POSIXError(POSIXErrorCode(rawValue: written ? errno : code) ?? .EIO)
        }
    }

    /// Deletes the file; no file is not an error.
    public func remove() throws {
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        try FileManager.default.removeItem(at: url)
    }
}

extension PrivateFile {
    /// An exclusive lock between processes: `flock(2)` on a 0600 file, not followed through a
    /// link. The system releases it when the holder exits, however it exits.
    struct Lock {
        let path: String
        private let descriptor: Int32

        init(path: String) throws {
            let folder = (path as NSString).deletingLastPathComponent
            if !FileManager.default.fileExists(atPath: folder) {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            (self.path, self.descriptor) = (path, descriptor)
        }

        /// Waits for the lock, polling, for up to `wait`; throws `TokenStoreBusy` after.
        func acquire(within wait: Duration) async throws {
            let deadline = ContinuousClock.now + wait
            while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
                guard errno == EWOULDBLOCK || errno == EINTR else {
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
                guard ContinuousClock.now < deadline else { throw TokenStoreBusy(path: path) }
                try await Task.sleep(for: .milliseconds(10))
            }
        }

        /// Lets go of the lock (closing the file does).
        func release() { close(descriptor) }
    }
}

/// Writes all of `data` to `descriptor` (at file scope, where `write` is the system call's).
private func writeAll(_ data: Data, to descriptor: Int32) -> Bool {
    data.withUnsafeBytes { bytes in
        guard let base = bytes.baseAddress else { return true }
        var offset = 0
        while offset < bytes.count {
            let count = write(descriptor, base + offset, bytes.count - offset)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }
}

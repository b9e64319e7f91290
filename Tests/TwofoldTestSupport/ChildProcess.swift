import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A program started with `posix_spawn`, for the tests.
///
/// Foundation's `Process.run` on Linux walks `/proc/self/fd` to close what the child must not
/// inherit, and in full runs holding over a thousand descriptors that walk crashed the test
/// process (SIGSEGV in `findMaximumOpenFromProcSelfFD`, twice in eight runs, once in CI). Here
/// the child closes everything above standard error itself (`closefrom` as a spawn action), so
/// nothing in this process is read while other threads open and close descriptors, and no
/// child keeps another child's pipe open.
public final class ChildProcess: @unchecked Sendable {
    // Safe: `state` is read and written under `lock`; the rest is set once in `init`.

    /// Where a standard stream of the child goes.
    public enum Stream: Sendable {
        case null
        /// A pipe whose other end this object holds.
        case pipe
        /// Appended to this file.
        case file(URL)
    }

    public let pid: pid_t
    /// The write end of the child's standard input when it is `.pipe`.
    public let standardInput: FileHandle?
    /// The read ends of the child's output streams when they are `.pipe`.
    public let standardOutput: FileHandle?
    public let standardError: FileHandle?

    private let lock = NSLock()
    private var state: Int32?

    /// Starts `executable` with `arguments`; `environment` replaces this process's when given.
    public init(
        _ executable: URL, arguments: [String], environment: [String: String]? = nil,
        input: Stream = .null, output: Stream = .null, error: Stream = .null
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [FileHandle?] = []
        var childEnds: [Int32] = []
        defer { for descriptor in childEnds { close(descriptor) } }
        for (target, stream) in [(Int32(0), input), (1, output), (2, error)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
                parentEnds.append(nil)
            case .file(let url):
                posix_spawn_file_actions_addopen(
                    &actions, target, url.path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
                parentEnds.append(nil)
            case .pipe:
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else { throw ChildProcessError.system("pipe", errno) }
                let (childEnd, parentEnd) = target == 0 ? (ends[0], ends[1]) : (ends[1], ends[0])
                // Every child here closes what it inherits above standard error; close-on-exec
                // keeps the parent's end from any other program started by this process too.
                _ = fcntl(parentEnd, F_SETFD, FD_CLOEXEC)
                childEnds.append(childEnd)
                posix_spawn_file_actions_adddup2(&actions, childEnd, target)
                parentEnds.append(FileHandle(fileDescriptor: parentEnd, closeOnDealloc: true))
            }
        }
        try Self.addCloseFrom(&actions, 3)

        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let variables =
            (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") }
            + [nil]
        defer { for pointer in variables { free(pointer) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, executable.path, &actions, nil, argv, variables)
        guard status == 0 else { throw ChildProcessError.system("posix_spawn \(executable.path)", status) }
        pid = child
        standardInput = parentEnds[0]
        standardOutput = parentEnds[1]
        standardError = parentEnds[2]
    }

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34), which the Swift `Glibc` module
    /// does not declare.
    private static func addCloseFrom(_ actions: inout posix_spawn_file_actions_t, _ lowest: Int32) throws {
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        else { throw ChildProcessError.unsupported("posix_spawn_file_actions_addclosefrom_np (glibc 2.34 or later)") }
        let status = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, lowest)
        guard status == 0 else { throw ChildProcessError.system("posix_spawn_file_actions_addclosefrom_np", status) }
    }

    /// Whether the child has not exited yet.
    public var isRunning: Bool { reap(blocking: false) == nil }

    /// The exit code, or the number of the signal that ended it; `nil` while it runs.
    public var terminationStatus: Int32? { reap(blocking: false) }

    /// Waits for the child to end and returns `terminationStatus`.
    @discardableResult
    public func waitUntilExit() -> Int32 {
        while true {
            if let status = reap(blocking: false) { return status }
            usleep(5_000)
        }
    }

    /// Sends SIGTERM.
    public func terminate() { signal(SIGTERM) }

    public func signal(_ number: Int32) {
        lock.withLock {
            if state == nil { _ = kill(pid, number) }
        }
    }

    private func reap(blocking: Bool) -> Int32? {
        lock.withLock {
            if let state { return state }
            var raw: Int32 = 0
            let result = waitpid(pid, &raw, blocking ? 0 : WNOHANG)
            guard result == pid else { return nil }
            // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
            let signal = raw & 0x7f
            if signal == 0 {
                state = (raw >> 8) & 0xff
            } else if signal != 0x7f {
                state = signal
            }
            return state
        }
    }

    deinit {
        if isRunning {
            terminate()
            waitUntilExit()
        }
    }
}

public enum ChildProcessError: Error, CustomStringConvertible {
    case system(String, Int32)
    case unsupported(String)

    public var description: String {
        switch self {
        case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        case .unsupported(let what): "this system lacks \(what)"
        }
    }
}

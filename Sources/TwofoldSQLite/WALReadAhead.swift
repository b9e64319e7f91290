#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Asks the kernel to read the part of the write-ahead log that the writer will overwrite next,
/// so that overwriting it never waits for the disk.
///
/// Once a checkpoint has moved the whole log into the database, SQLite starts the log again from
/// its beginning, writing over the old frames instead of growing the file. A frame (a 24-byte
/// header and a page) does not start on a block boundary, so each one writes part of a block; a
/// block that has left the page cache must then be read before it is written, and the writer
/// (and every sign-in in its commit) waits for that read, queued behind the checkpoint's flush.
/// After a burst the log is hundreds of megabytes, written seconds to minutes before, and the
/// kernel drops such pages (on the benchmark machine a DAMON pageout scheme drops cold page
/// cache): a paced run after a restart read 455–3,246 blocks from the disk in 10 s, against
/// 114–322 with this read-ahead (docs/architecture.md).
///
/// The checkpointer calls `prefetch(framesInLog:backfilled:)` after every checkpoint, on its own
/// thread: `POSIX_FADV_WILLNEED` starts the reads and returns. Only a log larger than its frames
/// has a part to overwrite; a growing log is written past its end, where nothing is read.
package final class WALReadAhead: @unchecked Sendable {  // used only on the checkpointer's thread
    /// How far ahead of the writer to read: at saturation the writer adds ~70 MB of frames a
    /// second, so 64 MB lasts past the next checkpoint, also when a checkpoint's flush takes
    /// half a second.
    package static let span = 64 << 20
    /// Linux reads at most the device's read-ahead window per `POSIX_FADV_WILLNEED` (128 KB by
    /// default), so a range is asked for in pieces of that size.
    package static let piece = 128 << 10
    package static let headerSize = 32
    package static let frameHeaderSize = 24

    private let path: String
    private let frameSize: Int
    private var descriptor: Int32 = -1

    package init(databasePath: String, pageSize: Int) {
        path = databasePath + "-wal"
        frameSize = Self.frameHeaderSize + pageSize
    }

    /// The byte ranges the writer writes next, for a log holding `framesInLog` frames of which
    /// `backfilled` are in the database, in a file of `fileSize` bytes: after the last frame, and,
    /// when every frame is in the database, also from the beginning (the next write transaction
    /// starts the log again there, unless a reader still uses the log). Ranges that overlap are
    /// joined.
    package func rangesToRead(framesInLog: Int, backfilled: Int, fileSize: Int) -> [Range<Int>] {
        guard framesInLog >= 0 else { return [] }  // -1: the database is not in WAL mode
        let end = Self.headerSize + framesInLog * frameSize
        let afterTheLog = end..<max(end, min(fileSize, end + Self.span))
        guard framesInLog > 0, backfilled >= framesInLog else { return afterTheLog.isEmpty ? [] : [afterTheLog] }
        let fromTheStart = Self.headerSize..<max(Self.headerSize, min(fileSize, Self.headerSize + Self.span))
        if afterTheLog.isEmpty || fromTheStart.upperBound >= afterTheLog.lowerBound {
            let joined = fromTheStart.lowerBound..<max(fromTheStart.upperBound, afterTheLog.upperBound)
            return joined.isEmpty ? [] : [joined]
        }
        return [afterTheLog, fromTheStart]
    }

    /// Starts reading those ranges into the page cache; does not wait for them. Best effort: a log
    /// that cannot be opened is left alone (the writer then reads what it needs itself).
    package func prefetch(framesInLog: Int, backfilled: Int) {
        if descriptor < 0 { descriptor = open(path, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { return }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return }
        // A log deleted meanwhile (its last connection closed) is not the one the writer writes:
        // open the path again next time.
        guard status.st_nlink > 0 else { return close() }
        for range in rangesToRead(framesInLog: framesInLog, backfilled: backfilled, fileSize: Int(status.st_size)) {
            #if canImport(Glibc)
                for start in stride(from: range.lowerBound, to: range.upperBound, by: Self.piece) {
                    let length = min(Self.piece, range.upperBound - start)
                    _ = posix_fadvise(descriptor, off_t(start), off_t(length), POSIX_FADV_WILLNEED)
                }
            #endif
        }
    }

    package func close() {
        if descriptor >= 0 {
            #if canImport(Glibc)
                _ = Glibc.close(descriptor)
            #else
                _ = Darwin.close(descriptor)
            #endif
        }
        descriptor = -1
    }
}

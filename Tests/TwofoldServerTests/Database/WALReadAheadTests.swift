import Foundation
import Testing
import TwofoldSQLite

@testable import TwofoldServer

#if canImport(Glibc)
    import Glibc
#endif

/// The checkpointer has the part of the write-ahead log that the writer overwrites next read
/// into memory, so that overwriting it never waits for the disk.
struct WALReadAheadTests {
    static let pageSize = 4096
    static let frame = WALReadAhead.frameHeaderSize + pageSize

    static func ranges(frames: Int, backfilled: Int, fileSize: Int) -> [Range<Int>] {
        WALReadAhead(databasePath: "/nonexistent", pageSize: pageSize)
            .rangesToRead(framesInLog: frames, backfilled: backfilled, fileSize: fileSize)
    }

    @Test func aGrowingLogHasNothingToRead() {
        let end = WALReadAhead.headerSize + 1000 * Self.frame
        #expect(Self.ranges(frames: 1000, backfilled: 400, fileSize: end).isEmpty)
        #expect(Self.ranges(frames: 0, backfilled: 0, fileSize: 0).isEmpty)
        // SQLite answers -1 for a database not in WAL mode.
        #expect(Self.ranges(frames: -1, backfilled: -1, fileSize: 1 << 20).isEmpty)
    }

    @Test func aRestartedLogIsReadAfterItsLastFrame() {
        let end = WALReadAhead.headerSize + 10 * Self.frame
        // The log started again and holds 10 frames; the old file is 700 MB.
        #expect(Self.ranges(frames: 10, backfilled: 3, fileSize: 700 << 20) == [end..<(end + WALReadAhead.span)])
        // Near the end of the file, up to its end.
        #expect(Self.ranges(frames: 10, backfilled: 3, fileSize: end + 5000) == [end..<(end + 5000)])
    }

    @Test func aLogWhollyInTheDatabaseIsAlsoReadFromItsBeginning() {
        // The next write transaction starts the log again at its first frame; if a reader still
        // uses the log, the writer goes on after its last frame instead.
        let far = WALReadAhead.headerSize + 100_000 * Self.frame
        #expect(
            Self.ranges(frames: 100_000, backfilled: 100_000, fileSize: 700 << 20) == [
                far..<(far + WALReadAhead.span),
                WALReadAhead.headerSize..<(WALReadAhead.headerSize + WALReadAhead.span),
            ])
        // Overlapping ranges are read once.
        let near = WALReadAhead.headerSize + 50 * Self.frame
        #expect(
            Self.ranges(frames: 50, backfilled: 50, fileSize: 700 << 20) == [
                WALReadAhead.headerSize..<(near + WALReadAhead.span)
            ])
        // A log as long as its file: only its beginning.
        #expect(Self.ranges(frames: 50, backfilled: 50, fileSize: near) == [WALReadAhead.headerSize..<near])
    }

    #if os(Linux)
        /// Pages of `path` in the page cache, by `mincore` over a mapping of the file.
        static func residentPages(_ path: String, size: Int) -> Int? {
            let descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            guard let mapping = mmap(nil, size, PROT_READ, MAP_SHARED, descriptor, 0), mapping != MAP_FAILED
            else { return nil }
            defer { munmap(mapping, size) }
            let page = Int(sysconf(Int32(_SC_PAGESIZE)))
            var vector = [UInt8](repeating: 0, count: (size + page - 1) / page)
            guard mincore(mapping, size, &vector) == 0 else { return nil }
            return vector.filter { $0 & 1 == 1 }.count
        }

        /// Writes `size` bytes to `path` and drops them from the page cache, as the kernel drops a
        /// log written long ago; answers whether they left it (not on tmpfs, which keeps every
        /// page in memory and leaves nothing to read ahead).
        static func writeOutOfMemory(_ path: String, size: Int) throws -> Bool {
            try Data(repeating: 7, count: size).write(to: URL(fileURLWithPath: path))
            let descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else { return false }
            fdatasync(descriptor)
            posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED)
            close(descriptor)
            return (residentPages(path, size: size) ?? size) < size / Int(sysconf(Int32(_SC_PAGESIZE))) / 4
        }

        static let temporaryFolderDropsPages: Bool = {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("twofold-probe-\(UUID())").path
            defer { unlink(path) }
            return (try? writeOutOfMemory(path, size: 1 << 20)) ?? false
        }()

        @Test(.enabled(if: temporaryFolderDropsPages))
        func theRangesAreReadIntoThePageCache() async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("twofold-\(UUID())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let database = folder.appendingPathComponent("db.sqlite").path
            let size = 8 << 20
            try #require(try Self.writeOutOfMemory(database + "-wal", size: size))
            let before = try #require(Self.residentPages(database + "-wal", size: size))
            let pages = size / Int(sysconf(Int32(_SC_PAGESIZE)))

            let readAhead = WALReadAhead(databasePath: database, pageSize: Self.pageSize)
            defer { readAhead.close() }
            // Every frame is in the database: the writer starts again at the beginning.
            readAhead.prefetch(framesInLog: 100, backfilled: 100)
            // The reads run in the background: wait for them, two seconds at most. Read-ahead is
            // advice: under I/O pressure (the rest of the suite writing) the kernel may skip or
            // drop a few pages of it (12 of 2,048 once), so most of the file, not all, must be
            // back; without the advice none of it comes back.
            let most = pages * 9 / 10
            var resident = before
            var waited = 0
            while resident < most, waited < 200 {
                try await Task.sleep(for: .milliseconds(10))
                waited += 1
                resident = try #require(Self.residentPages(database + "-wal", size: size))
            }
            #expect(resident >= most)
        }
    #endif
}

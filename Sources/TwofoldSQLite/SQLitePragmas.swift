/// The settings every connection to an SQLite database file gets, Twofold's own and Fluent's
/// (`SQLiteTuning` in the server): write-ahead logging, so readers never wait for the writer and
/// a commit is one sequential write; `synchronous=NORMAL`, which in WAL mode never corrupts the
/// file and loses at most the last commits on a power cut (not on a crash of the process); and a
/// 5-second busy timeout, so a connection waiting for the write lock sleeps instead of spinning.
package enum SQLitePragmas {
    package static let all = [
        "PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA busy_timeout = 5000",
    ]
}

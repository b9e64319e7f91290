import NIOCore
import TwofoldSQLite
import Vapor

/// The direct SQLite connection closes with the application.
extension DirectSQLite: LifecycleHandler {
    public func shutdownAsync(_ application: Application) async {
        await close()
    }
}

/// Units of work next to the database (the second step of a sign-in).
struct UnitsOfWork: Sendable {
    /// Twofold's own SQLite connection; `nil` for any other database, where a unit simply runs.
    let direct: DirectSQLite?

    /// Runs `body` where database statements cost no thread hop: on the direct SQLite
    /// connection's thread when there is one. For a path that sends many statements in a row
    /// (the second step of a sign-in writes seven times). Under load it first waits for the
    /// connection's commit window (`DirectSQLiteConnection.admission()`), to share a commit with
    /// the units arriving meanwhile. Answers only once its writes are committed, also when it
    /// throws (a wrong code's recorded failure must stand before the client hears of it).
    /// `eventLoop` (the request's) is where the rest of the request resumes afterwards.
    func run<T: Sendable>(on eventLoop: any EventLoop, _ body: () async throws -> T) async throws -> T {
        guard let sqlite = direct else { return try await body() }
        let connection = sqlite.database.connection
        let result = try await withTaskExecutorPreference(EventLoopTaskExecutor(eventLoop)) {
            try await sqlite.thread.run {
                if let window = try await sqlite.thread.perform({ connection.admission() }) {
                    try await window.get()
                }
                let unit = WriteGroups()
                let result: Result<T, any Error>
                do {
                    result = .success(try await WriteGroups.$current.withValue(unit) { try await body() })
                } catch {
                    result = .failure(error)
                }
                let groups = unit.groups
                // The units queued behind this one run, and share its commit, while it waits here.
                try await sqlite.thread.perform { connection.settled(groups) }.get()
                return result
            }
        }
        return try result.get()
    }
}

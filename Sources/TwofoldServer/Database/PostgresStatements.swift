import Foundation
import Logging
import NIOSSL
import PostgresKit
import PostgresNIO
import TwofoldSQLite
import Vapor

/// The stores' statements on PostgreSQL, sent straight through PostgresNIO's client: each
/// `Statement` becomes one extended-protocol query (its `?`s numbered `$1…`, its values bound with
/// their types), one round trip, and its rows are read by position. Fluent keeps its own pool
/// for the migrations; SQLKit's serializer, its Codable encoders and its rows read by name are
/// not on this path.
struct PostgresStatements: Sendable {
    let client: PostgresClient
    let logger: Logger
    /// The statements the stores name (`Statement.named`), by name: each is prepared once per
    /// connection. A named statement missing here runs as any other.
    let prepared: [String: any PreparedText.Type]
    /// Ends a statement's wait for a connection when the client hands out none for the
    /// configured time (`Configuration.postgresConnectTimeout`, `ConnectionWatch`); stop it with
    /// the client.
    let watch: ConnectionWatch
    /// How many statements were sent (each one round trip).
    let sent = StatementCount()

    /// A client for the database at `url` (a `postgres://` URL, as Fluent reads it) keeping up
    /// to `connections` connections, not yet running: `run()` it for as long as the server runs.
    /// A connection that takes longer than `connectTimeout` (at least 10 s, PostgresNIO's
    /// default) to open is given up.
    static func client(
        url: String, connections: Int, connectTimeout: Duration = .seconds(10), logger: Logger
    ) throws -> PostgresClient {
        let core = try SQLPostgresConfiguration(url: url).coreConfiguration
        guard let host = core.host else { throw PostgresStatementsError.noHost }
        let tls: PostgresClient.Configuration.TLS =
            core.tls.isEnforced
            ? .require(.makeClientConfiguration())
            : core.tls.isAllowed ? .prefer(.makeClientConfiguration()) : .disable
        var configuration = PostgresClient.Configuration(
            host: host, port: core.port ?? 5432, username: core.username, password: core.password,
            database: core.database, tls: tls)
        configuration.options.maximumConnections = connections
        configuration.options.connectTimeout = max(connectTimeout, .seconds(10))
        // So that an operator sees them in `pg_stat_activity` (Fluent's, for the migrations, have none).
        configuration.options.additionalStartupParameters = [("application_name", applicationName)]
        return PostgresClient(configuration: configuration, backgroundLogger: logger)
    }

    /// The `application_name` of the client's connections.
    static let applicationName = "twofold"

    func rows<T: Sendable>(
        _ statement: Statement, _ read: @escaping @Sendable (StatementRow) throws -> T
    ) async throws -> [T] {
        try await leased { connection in try await run(statement, read, on: connection) }
    }

    /// `first`, then `second` once `first` is committed, on one connection: one lease from the
    /// pool for both (`SQLExecutor.rows(_:_:then:_:)`).
    func rows<A: Sendable, B: Sendable>(
        _ first: Statement, _ readFirst: @escaping @Sendable (StatementRow) throws -> A,
        then second: Statement, _ readSecond: @escaping @Sendable (StatementRow) throws -> B
    ) async throws -> ([A], [B]) {
        try await leased { connection in
            let firstRows = try await run(first, readFirst, on: connection)
            return (firstRows, try await run(second, readSecond, on: connection))
        }
    }

    /// Runs `body` on a connection of the pool, once the pool hands one out within the watch's
    /// limit.
    private func leased<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws
        -> T
    {
        let ticket = watch.waiting()
        do {
            return try await client.withConnection { [watch] connection in
                // Cut short just as the connection came: the task is cancelled, answer as for
                // a wait that ended without one.
                if watch.leased(ticket) { throw PostgresStatementsError.noConnection(within: watch.limit) }
                // A connection PostgreSQL closed after the pool handed it out: a query written
                // to it now would be lost (`ConnectionWatch.running`).
                if connection.isClosed { throw PostgresStatementsError.connectionLost }
                return try await watch.running(on: connection) { try await body(connection) }
            }
        } catch {
            if watch.ended(ticket) { throw PostgresStatementsError.noConnection(within: watch.limit) }
            throw error
        }
    }

    /// One statement on `connection`: prepared when it is named and registered, its rows read.
    private func run<T: Sendable>(
        _ statement: Statement, _ read: @escaping @Sendable (StatementRow) throws -> T,
        on connection: PostgresConnection
    ) async throws -> [T] {
        sent.add()
        var rows: [T] = []
        if let name = statement.name, let text = prepared[name] {
            for try await row in try await text.execute(statement, on: connection, logger: logger) {
                rows.append(try read(StatementRow(PostgresColumns(row: row.makeRandomAccess()))))
            }
        } else {
            for try await row in try await connection.query(Self.query(statement), logger: logger) {
                rows.append(try read(StatementRow(PostgresColumns(row: row.makeRandomAccess()))))
            }
        }
        return rows
    }

    /// `statement` as a PostgreSQL query: its `?`s numbered `$1`, `$2`, … in order, and its
    /// values bound with their types (a `nil` keeps its type, as PostgreSQL needs).
    static func query(_ statement: Statement) -> PostgresQuery {
        PostgresQuery(unsafeSQL: numbered(statement.sql), binds: bindings(statement.values))
    }

    /// `sql` with its `?`s numbered `$1`, `$2`, … in order.
    static func numbered(_ sql: String) -> String {
        // On the UTF-8 bytes: a `?` is one byte and never part of another character.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(sql.utf8.count + 16)
        var number = 0
        for byte in sql.utf8 {
            guard byte == UInt8(ascii: "?") else {
                bytes.append(byte)
                continue
            }
            number += 1
            bytes.append(UInt8(ascii: "$"))
            bytes.append(contentsOf: String(number).utf8)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func bindings(_ values: [Statement.Value]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .text(let text): bindings.append(text)
            case .integer(let integer): bindings.append(integer)
            case .uuid(let uuid): bindings.append(uuid)
            case .date(let date): bindings.append(date)
            case .double(let double): bindings.append(double)
            }
        }
        return bindings
    }

    /// The PostgreSQL types of `values`, in order (for a prepared statement's parameters).
    static func types(_ values: [Statement.Value]) -> [PostgresDataType] {
        values.map { value in
            switch value {
            case .text: .text
            case .integer: .int8
            case .uuid: .uuid
            case .date: .timestamptz
            case .double: .float8
            }
        }
    }
}

/// The text of a statement PostgreSQL prepares once per connection (`Statement.name`): its
/// name, its `$`-numbered SQL and its parameters' types. Stores declare theirs beside their
/// SQL, and `TwofoldContext.Stores.prepared` hands them to the adapter.
protocol PreparedText {
    static var name: String { get }
    static var sql: String { get }
    static var types: [PostgresDataType] { get }
}

extension PreparedText {
    /// Runs `statement`, whose text is this one's, as PostgresNIO's prepared statement. The rows
    /// come back as PostgresNIO's own sequence, a concrete type, so the loop that reads them is
    /// compiled for it rather than run through an opaque type's witness tables on every row.
    static func execute(
        _ statement: Statement, on connection: PostgresConnection, logger: Logger
    ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, PostgresRow> {
        try await connection.execute(Prepared<Self>(statement), logger: logger)
    }
}

/// A `Statement` whose text is `Text`'s, run as PostgresNIO's prepared statement.
struct Prepared<Text: PreparedText>: PostgresPreparedStatement {
    typealias Row = PostgresRow
    static var name: String { Text.name }
    static var sql: String { Text.sql }
    static var bindingDataTypes: [PostgresDataType] { Text.types }

    let values: [Statement.Value]

    init(_ statement: Statement) {
        precondition(statement.name == Text.name, "\(statement.name ?? "an unnamed statement") is not \(Text.name)")
        assert(PostgresStatements.numbered(statement.sql) == Text.sql, "\(Text.name) runs another statement's text")
        assert(PostgresStatements.types(statement.values) == Text.types, "\(Text.name)'s values are not its types")
        values = statement.values
    }

    func makeBindings() throws -> PostgresBindings { PostgresStatements.bindings(values) }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// A PostgreSQL row read by column position.
struct PostgresColumns: StatementColumns {
    let row: PostgresRandomAccessRow

    private func read<T: PostgresDecodable>(_ column: Int, as type: T.Type) throws -> T? where T._DecodableType == T {
        guard column < row.count else { throw StatementRowError(column: column, reason: "does not exist") }
        return try row[column].decode(T?.self)
    }

    func optionalText(_ column: Int) throws -> String? { try read(column, as: String.self) }
    func optionalInteger(_ column: Int) throws -> Int? { try read(column, as: Int.self) }
    func optionalUUID(_ column: Int) throws -> UUID? { try read(column, as: UUID.self) }
    func optionalDate(_ column: Int) throws -> Date? { try read(column, as: Date.self) }
    func optionalDouble(_ column: Int) throws -> Double? { try read(column, as: Double.self) }
    func bool(_ column: Int) throws -> Bool {
        guard let value = try read(column, as: Bool.self) else {
            throw StatementRowError(column: column, reason: "is NULL")
        }
        return value
    }
}

enum PostgresStatementsError: Error, CustomStringConvertible {
    case noHost
    /// No connection handed out to anyone within this time (`Configuration.postgresConnectTimeout`).
    case noConnection(within: Duration)
    /// The statement's connection closed under it, and PostgresNIO would never have answered.
    case connectionLost
    var description: String {
        switch self {
        case .noHost: "DATABASE_URL names no PostgreSQL host"
        case .noConnection(let limit): "no PostgreSQL connection within \(limit)"
        case .connectionLost: "the PostgreSQL connection closed during the statement"
        }
    }
}

/// Runs a PostgreSQL client from start-up until the application shuts down. It starts at once,
/// not when the application boots: the migrations and the tests may query before that.
final class PostgresClientRunner: LifecycleHandler, Sendable {
    private let task: Task<Void, Never>
    private let watch: ConnectionWatch

    init(client: PostgresClient, watch: ConnectionWatch) {
        task = Task { await client.run() }
        self.watch = watch
    }

    /// Stops the client, then the watch: the client's shutdown closes leased connections, and a
    /// statement whose query was lost so is still answered by the sweeps until then.
    func shutdownAsync(_ application: Application) async {
        task.cancel()
        await task.value
        watch.stop()
    }
}

/// Watches the statements waiting for a connection, and cancels the tasks of those that have
/// waited `limit` while the client handed out no connection to anyone in that time: a pool cut
/// off from PostgreSQL, not a busy one. One sweep every `interval` on an event loop's timer
/// does it, so a statement that gets its connection costs two short lock holds and no timer
/// of its own (docs/performance.md has what each design cost).
/// A task's handle is kept only while it is registered, and it unregisters itself (`leased`,
/// `ended`) under the same lock before it returns: it is never cancelled after it ended.
///
/// It also answers statements PostgresNIO would leave waiting forever: a query written to a
/// connection whose channel PostgreSQL has just closed (`pg_terminate_backend`, a restart) is
/// dropped by the torn-down pipeline before PostgresNIO's handler sees it (1.33.2 writes it
/// with `promise: nil`), so its answer never comes; about one request in 700 hung so while
/// PostgreSQL terminated the server's connections. `running` gives each statement an answer
/// the sweep can give instead: once its connection has been closed for `grace`, the statement
/// fails with `connectionLost` (a `503`). A statement answered on time costs one task and two
/// short lock holds; one answered by the sweep leaves PostgresNIO's suspended task behind (it
/// holds a closed connection's lost query, nothing else).
final class ConnectionWatch: @unchecked Sendable {
    // Safe: every member below is read and written under `lock`.
    private let lock = NSLock()
    private var waiters: [UInt64: Waiter] = [:]
    private var statements: [UInt64: Running] = [:]
    private var nextTicket: UInt64 = 0
    private var lastLease = NIODeadline.now()
    private var sweeps: RepeatedTask?
    /// How long waiters may wait while no connection is handed out.
    let limit: Duration
    private let waitLimit: TimeAmount
    private let grace: TimeAmount

    private struct Waiter {
        let since: NIODeadline
        let task: UnsafeCurrentTask
        var cancelled = false
    }

    private struct Running {
        let connection: any ClosableConnection
        let lose: @Sendable () -> Void
        var closedSince: NIODeadline?
    }

    /// Starts sweeping every `interval` on `loop`; a statement whose connection has been closed
    /// for `grace` without its answer fails.
    init(limit: Duration, interval: Duration, grace: Duration = .seconds(5), on loop: any EventLoop) {
        self.limit = limit
        self.waitLimit = TimeAmount(limit)
        self.grace = TimeAmount(grace)
        let every = TimeAmount(interval)
        let task = loop.scheduleRepeatedTask(initialDelay: every, delay: every) { [weak self] _ in self?.sweep() }
        lock.withLock { sweeps = task }
    }

    /// Registers the calling task as waiting for a connection; its ticket (`nil` outside a task,
    /// which nothing can cancel).
    func waiting() -> UInt64? {
        withUnsafeCurrentTask { task in
            guard let task else { return nil }
            let since = NIODeadline.now()
            return lock.withLock {
                nextTicket &+= 1
                waiters[nextTicket] = Waiter(since: since, task: task)
                return nextTicket
            }
        }
    }

    /// The waiter with `ticket` got its connection: it is no longer watched, and the pool is
    /// handing out connections. Answers whether the watch had cancelled it meanwhile (a sweep
    /// between the pool's handing out and this call).
    @discardableResult
    func leased(_ ticket: UInt64?) -> Bool {
        let now = NIODeadline.now()
        return lock.withLock {
            lastLease = now
            guard let ticket else { return false }
            return waiters.removeValue(forKey: ticket)?.cancelled ?? false
        }
    }

    /// The waiter with `ticket` ended without a connection (an error): unregisters it, and
    /// answers whether the watch cancelled it.
    func ended(_ ticket: UInt64?) -> Bool {
        guard let ticket else { return false }
        return lock.withLock { waiters.removeValue(forKey: ticket)?.cancelled ?? false }
    }

    /// Runs `body` (a statement on `connection`) and answers what it answers, unless the
    /// connection closes and `body` has not answered `grace` later: then `connectionLost`.
    func running<T: Sendable>(
        on connection: any ClosableConnection, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let answer = Answer(continuation)
            let ticket = lock.withLock {
                nextTicket &+= 1
                statements[nextTicket] = Running(
                    connection: connection, lose: { answer.give(.failure(PostgresStatementsError.connectionLost)) })
                return nextTicket
            }
            Task {
                let result: Result<T, any Error>
                do { result = .success(try await body()) } catch { result = .failure(error) }
                _ = lock.withLock { statements.removeValue(forKey: ticket) }
                answer.give(result)
            }
        }
    }

    /// Cancels every waiter that has waited `limit`, unless a connection was handed out within
    /// the last `limit`; fails every statement whose connection has been closed for `grace`.
    func sweep() {
        let now = NIODeadline.now()
        let lost: [@Sendable () -> Void] = lock.withLock {
            var lost: [@Sendable () -> Void] = []
            for (ticket, statement) in statements where statement.connection.isClosed {
                if let since = statement.closedSince {
                    if now - since >= grace {
                        lost.append(statement.lose)
                        statements[ticket] = nil
                    }
                } else {
                    statements[ticket]?.closedSince = now
                }
            }
            guard now - lastLease >= waitLimit else { return lost }
            for (ticket, waiter) in waiters where !waiter.cancelled && now - waiter.since >= waitLimit {
                waiters[ticket]?.cancelled = true
                waiter.task.cancel()
            }
            return lost
        }
        for lose in lost { lose() }
    }

    /// Stops the sweeps (at shutdown).
    func stop() {
        lock.withLock { sweeps }?.cancel()
    }
}

/// A connection that can tell whether it has closed (from any thread).
protocol ClosableConnection: Sendable {
    var isClosed: Bool { get }
}

extension PostgresConnection: ClosableConnection {}

/// A continuation resumed once, by whichever of two answers comes first.
private final class Answer<T: Sendable>: @unchecked Sendable {
    // Safe: `continuation` is read and cleared under `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?

    init(_ continuation: CheckedContinuation<T, any Error>) { self.continuation = continuation }

    func give(_ result: Result<T, any Error>) {
        let waiting = lock.withLock {
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(with: result)
    }
}

/// A count of statements, read by tests (a second step on PostgreSQL is two).
final class StatementCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

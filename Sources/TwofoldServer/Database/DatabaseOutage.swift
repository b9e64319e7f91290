import AsyncKit
import Foundation
import NIOCore
import PostgresNIO
import SQLiteNIO
import TwofoldAPI
import TwofoldSQLite
import _ConnectionPoolModule

/// Tells an error that means "the database cannot be reached or cannot write now" from a bug:
/// those are the server's trouble, not the request's, and are answered `503` with `Retry-After`
/// (issue S item 13) instead of `500`, so clients and load balancers retry rather than report.
enum DatabaseOutage {
    static let retryAfter = 5

    /// Why the database is unavailable, in words for `/readyz` and the log; `nil` for any other error.
    static func reason(for error: any Error) -> String? {
        switch error {
        case let error as PSQLError:
            switch error.code {
            case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
                return "the PostgreSQL connection failed"
            case .server:
                return postgresReason(sqlState: error.serverInfo?[.sqlState])
            default:
                return nil
            }
        case PostgresStatementsError.noConnection:
            return "no PostgreSQL connection could be made in time"
        case PostgresStatementsError.connectionLost:
            return "the PostgreSQL connection closed during a statement"
        case let error as _ConnectionPoolModule.ConnectionPoolError:
            // PostgresNIO's pool stops trying after a minute of failed connections with none
            // open, and fails every request at once until one opens again. A request cancelled
            // while it waited is no outage.
            switch error {
            case .connectionCreationCircuitBreakerTripped: return "the PostgreSQL server cannot be reached"
            case .poolShutdown: return "the PostgreSQL connection pool has shut down"
            default: return nil
            }
        case is ConnectionPoolTimeoutError:
            return "no database connection became free in time"
        case is AsyncKit.ConnectionPoolError:
            return "the database connection pool has shut down"
        case is NIOConnectionError, is ChannelError:
            return "the database server cannot be reached"
        case let error as IOError:
            return "the database server cannot be reached (\(error.errnoCode))"
        case let error as DirectSQLiteError:
            return sqliteReason(primary: error.primaryStatus)
        case let error as SQLiteError:
            switch error.reason {
            case .busy, .locked: return sqliteReason(primary: 5)
            case .ioError: return sqliteReason(primary: 10)
            case .full: return sqliteReason(primary: 13)
            case .cantOpen: return sqliteReason(primary: 14)
            default: return nil
            }
        default:
            return nil
        }
    }

    /// A statement the server cut short because it is going away or not there yet (issue T: a
    /// PostgreSQL restart under sign-in load answered one request `500`): class 08 (connection
    /// exception), 57P01 `admin_shutdown`, 57P02 `crash_shutdown`, 57P03 `cannot_connect_now`,
    /// 53300 `too_many_connections`.
    static func postgresReason(sqlState: String?) -> String? {
        guard let sqlState else { return nil }
        switch sqlState {
        case "57P01", "57P02": return "the PostgreSQL server is shutting down"
        case "57P03": return "the PostgreSQL server is starting up"
        case "53300": return "the PostgreSQL server has no connection to spare"
        case _ where sqlState.hasPrefix("08"): return "the PostgreSQL connection failed"
        default: return nil
        }
    }

    /// SQLITE_BUSY (5), SQLITE_LOCKED (6), SQLITE_IOERR (10), SQLITE_FULL (13), SQLITE_CANTOPEN (14),
    /// SQLITE_READONLY (8).
    private static func sqliteReason(primary: Int32) -> String? {
        switch primary {
        case 5, 6: return "the database file is busy"
        case 8: return "the database file is read-only"
        case 10: return "the database file cannot be read or written"
        case 13: return "the disk holding the database file is full"
        case 14: return "the database file cannot be opened"
        default: return nil
        }
    }

    /// The answer for an outage.
    static func problem(_ reason: String) -> Problem {
        Problem(
            status: 503, code: .serviceUnavailable, title: "Service unavailable",
            detail: "The database is unavailable (\(reason)); try again shortly.", retryAfter: retryAfter)
    }
}

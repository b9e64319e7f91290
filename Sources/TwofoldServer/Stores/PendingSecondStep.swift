import Foundation
import PostgresNIO
import TwofoldAPI
import TwofoldSQLite

/// A login flow waiting for its second step, with what every second step needs of its user and
/// of the user's active authenticator-app secret, read in one statement on the request's own
/// thread (`LoginFlowService.pending`). Plain values, not Fluent models: every sign-in reads one,
/// and a model's property wrappers (an object, a boxed value and a dynamic cast for each field)
/// cost more than the read itself.
struct PendingSecondStep: Sendable {
    let flowID: UUID
    /// The factor already proven, as an RFC 8176 value (`pwd`).
    let firstFactor: String
    let expiresAt: Date
    let consumedAt: Date?
    let user: UserDTO
    let userStatus: User.Status
    /// The user's active authenticator-app secret; `nil` without one.
    let totp: TOTPSecret?
    /// The account's `SessionEpoch` the flow was started with; its session keeps it.
    let sessionEpoch: Int
    /// Every session of the account was ended after the flow's password (`SessionEpoch`).
    let overtaken: Bool

    /// The flow whose token hashes to `tokenHash`, read by `init(row:)`.
    static func query(tokenHash: String) -> Statement {
        Statement(sql, .text(tokenHash)).named(Self.name)
    }

    private static let flowColumns = Statement.columns(
        ["id", "first_factor", "expires_at", "consumed_at"], of: "login_flows", as: "flow")
    private static let userColumns = Statement.columns(
        ["id", "username", "email", "phone", "role", "status", "created_at"], of: "users", as: "user")
    private static let totpColumns = Statement.columns(
        ["id", "secret_ciphertext", "algorithm", "digits", "period", "last_used_step"], of: "totp_credentials",
        as: "totp")
    /// The statement's name and text, which PostgreSQL prepares once per connection.
    static let name = "twofold_pending_second_step"
    static let sql = """
        SELECT \(flowColumns), \(userColumns), \(totpColumns), login_flows.session_epoch,
          CASE WHEN \(SessionEpoch.current("login_flows")) THEN 0 ELSE 1 END
        FROM login_flows JOIN users ON users.id = login_flows.user_id
        LEFT JOIN totp_credentials ON totp_credentials.user_id = users.id AND totp_credentials.status = 'active'
        WHERE token_hash = ?
        """
}

extension PendingSecondStep {
    /// A row of `query(tokenHash:)`.
    init(row: StatementRow) throws {
        flowID = try row.uuid(0)
        firstFactor = try row.text(1)
        expiresAt = try row.date(2)
        consumedAt = try row.optionalDate(3)
        let userID = try row.uuid(4)
        // Read as the model would: a role or status it does not know is refused, not passed on.
        guard let role = User.Role(rawValue: try row.text(8)) else {
            throw StatementRowError(column: 8, reason: "is not a user role")
        }
        guard let status = User.Status(rawValue: try row.text(9)) else {
            throw StatementRowError(column: 9, reason: "is not a user status")
        }
        userStatus = status
        user = UserDTO(
            id: userID, username: try row.text(5), email: try row.text(6), phoneNumber: try row.optionalText(7),
            role: role.rawValue, status: status.rawValue, createdAt: try row.date(10))
        totp = try row.optionalUUID(11).map { id in
            TOTPSecret(
                id: id, userID: userID, ciphertext: try row.text(12), algorithm: try row.text(13),
                digits: try row.integer(14), period: try row.integer(15),
                lastUsedStep: try row.optionalInteger(16).map(Int64.init))
        }
        sessionEpoch = try row.integer(17)
        overtaken = try row.integer(18) != 0
    }
}

extension PendingSecondStep {
    /// The read as PostgreSQL prepares it.
    enum PostgresText: PreparedText {
        static let name = PendingSecondStep.name
        static let sql = PostgresStatements.numbered(PendingSecondStep.sql)
        static let types: [PostgresDataType] = [.text]
    }
}

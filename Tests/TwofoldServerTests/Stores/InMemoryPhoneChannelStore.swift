import Foundation

@testable import TwofoldServer

/// `PhoneChannelStore` in memory, for the service tests that build the context on in-memory
/// stores. It sees no sessions (those live in `InMemorySessionStore`): its sign-in watch reads none.
actor InMemoryPhoneChannelStore: PhoneChannelStore {
    private var tokens: [UUID: (userID: UUID, token: String)] = [:]
    private var notices: [(notice: PhoneNoticeRecord, sessionID: UUID?)] = []

    func setToken(_ token: String, deviceRowID: UUID, userID: UUID, now: Date) async throws {
        tokens = tokens.filter { $0.value.token != token }
        tokens[deviceRowID] = (userID, token)
    }

    func forgetToken(deviceRowID: UUID) async throws -> Bool { tokens.removeValue(forKey: deviceRowID) != nil }

    func forgetToken(_ token: String) async throws { tokens = tokens.filter { $0.value.token != token } }

    func tokens(userID: UUID, limit: Int) async throws -> [String] {
        Array(tokens.values.filter { $0.userID == userID }.map(\.token).prefix(limit))
    }

    func addNotice(_ notice: PhoneNoticeRecord, sessionID: UUID?) async throws -> Bool {
        if let sessionID, notices.contains(where: { $0.sessionID == sessionID }) { return false }
        notices.append((notice, sessionID))
        return true
    }

    func uncheckedSignIns(after: Date, until: Date, limit: Int) async throws -> [SignInSeen] { [] }

    func markChecked(_ ids: [UUID], now: Date) async throws {}

    func deleteChecks(before: Date) async throws {}

    func signIns(userID: UUID, from: Date, until: Date, except: UUID) async throws -> [SignInSeen] { [] }

    func signedInBefore(userID: UUID, until: Date, except: UUID) async throws -> Bool { false }

    func notices(userID: UUID, since: Date, limit: Int) async throws -> [PhoneNoticeRecord] {
        Array(
            notices.map(\.notice).filter { $0.userID == userID && $0.createdAt > since }
                .sorted { $0.createdAt > $1.createdAt }.prefix(limit))
    }

    func noticed(since: Date) async throws -> [UUID] {
        Array(Set(notices.map(\.notice).filter { $0.createdAt > since }.map(\.userID)))
    }

    func deleteNotices(before: Date) async throws { notices.removeAll { $0.notice.createdAt <= before } }
}

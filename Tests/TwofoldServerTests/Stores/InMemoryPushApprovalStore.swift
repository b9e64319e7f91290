import Foundation
import TwofoldAPI

@testable import TwofoldServer

/// `PushApprovalStore` in memory, with the SQL store's conditions (an actor: each call is one
/// atomic step, as each statement is).
actor InMemoryPushApprovalStore: PushApprovalStore {
    private var requests: [UUID: PushApprovalRecord] = [:]

    func open(_ request: PushApprovalRecord, budget: Int, since: Date) async throws -> Bool {
        guard requests.values.count(where: { $0.userID == request.userID && $0.createdAt > since }) < budget else {
            return false
        }
        for (id, other) in requests where other.userID == request.userID && other.status == .pending {
            requests[id]?.status = .replaced
            requests[id]?.decidedAt = request.createdAt
        }
        requests[request.id] = request
        return true
    }

    func request(id: UUID) async throws -> PushApprovalRecord? { requests[id] }

    func pending(userID: UUID, now: Date) async throws -> [PushApprovalRecord] {
        requests.values.filter { $0.userID == userID && $0.status == .pending && $0.expiresAt > now }
    }

    func made(userID: UUID, since: Date) async throws -> Int {
        requests.values.count { $0.userID == userID && $0.createdAt > since }
    }

    func decide(id: UUID, userID: UUID, status: PushStatus, deviceID: String, key: String, now: Date) async throws
        -> Bool
    {
        guard let request = requests[id], request.userID == userID, request.status == .pending, request.expiresAt > now
        else { return false }
        requests[id]?.status = status
        requests[id]?.decidedAt = now
        requests[id]?.deviceID = deviceID
        requests[id]?.signedKey = key
        return true
    }

    func use(id: UUID, flowID: UUID, purpose: PushApprovalRecord.Purpose, now: Date) async throws -> Bool {
        guard let request = requests[id], request.flowID == flowID, request.purpose == purpose,
            request.status == .approved
        else { return false }
        requests[id]?.status = .used
        requests[id]?.decidedAt = now
        return true
    }

    func decisions(userID: UUID, limit: Int) async throws -> [(status: PushStatus, at: Date)] {
        requests.values.filter { $0.userID == userID && $0.deviceID != nil && $0.decidedAt != nil }
            .sorted { $0.decidedAt! > $1.decidedAt! }.prefix(limit).map { ($0.status, $0.decidedAt!) }
    }

    func changed(since: Date) async throws -> [(id: UUID, userID: UUID)] {
        requests.values.filter { $0.createdAt > since || ($0.decidedAt ?? .distantPast) > since }.map {
            ($0.id, $0.userID)
        }
    }

    func deleteEnded(before: Date) async throws {
        for (id, request) in requests where request.expiresAt <= before { requests[id] = nil }
    }
}

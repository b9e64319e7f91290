import Foundation
import TwofoldAPI
import TwofoldCore

/// The phone's side of "Approve on your phone" (issue Z): the request waiting for this device,
/// and its answer signed by the device key. The app shows the request's three numbers, what
/// asks and from where, with "Deny" and "This wasn't me"; the signature covers what it showed
/// (the digest is computed here, from the fields shown), the number picked and the decision.
public struct PhoneApprovals: Sendable {
    private let session: SessionManager
    private let signer: any DeviceKeySigning

    /// Requests of `session`'s account, answered with `signer` (the device key the device was
    /// enrolled with; its prompt is the approval's Face ID, Touch ID or passcode).
    public init(session: SessionManager, signer: any DeviceKeySigning) {
        (self.session, self.signer) = (session, signer)
    }

    /// The request waiting for this device; with none, up to `wait` seconds (0 to 25) for one.
    public func waiting(wait: Int = 0) async throws -> [PushApprovalDTO] {
        try await check(wait: wait).approvals
    }

    /// The waiting request and the account's notices (a sign-in from a device or network it had
    /// not used, newest first); with no request and no notice newer than `after` (the newest
    /// notice's `id` the app has), up to `wait` seconds (0 to 25) for one.
    public func check(wait: Int = 0, after: String? = nil) async throws -> PushApprovalsResponse {
        let query = PushWaitQuery(wait: wait, after: after).items
        return try await session.authorized(stepUp: nil) { [client = session.client, deviceID = signer.deviceID] in
            try await client.send(API.Push.pending, deviceID, bearer: $0, query: query)
        }
    }

    /// Gives the server the device token Apple's push service gave the app
    /// (`application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`): requests and notices
    /// are then announced even while the app is closed.
    public func setPushToken(_ token: Data) async throws {
        let body = PushTokenRequest(pushToken: token.map { String(format: "%02x", $0) }.joined())
        _ = try await session.authorized(stepUp: nil) { [client = session.client, deviceID = signer.deviceID] in
            try await client.send(API.Push.setPushToken, deviceID, body, bearer: $0)
        }
    }

    /// Stops the announcements through Apple (the app signs out, or notifications were turned off).
    public func forgetPushToken() async throws {
        _ = try await session.authorized(stepUp: nil) { [client = session.client, deviceID = signer.deviceID] in
            try await client.send(API.Push.forgetPushToken, deviceID, bearer: $0)
        }
    }

    /// Answers `request`: `number` is the one picked (to approve). Throws `DeviceAuthFailure`
    /// when the key's prompt is declined (nothing was sent) and `APIError` when the server
    /// refuses (`409` when it was answered already).
    public func answer(
        _ request: PushApprovalDTO, _ decision: PushApprovalMessage.Decision, number: Int? = nil
    ) async throws -> PushDecisionResponse {
        let picked = decision == .approve ? number : nil
        let message = PushApprovalMessage.signed(
            requestID: request.requestId, number: picked, decision: decision, digest: Self.digest(of: request))
        let signature = try await signer.sign(challenge: message)
        let body = PushDecisionRequest(
            requestId: request.requestId, decision: decision.rawValue, number: picked,
            signature: signature.base64EncodedString())
        return try await session.authorized(stepUp: nil) { [client = session.client, deviceID = signer.deviceID] in
            try await client.send(API.Push.decide, deviceID, body, bearer: $0)
        }
    }

    /// The digest of `request` as shown: what the server stored when the fields are the same.
    public static func digest(of request: PushApprovalDTO) -> String {
        PushApprovalMessage.Shown(
            requestID: request.requestId, choices: request.choices, asking: request.asking, place: request.place,
            createdAt: Int64(request.createdAt.timeIntervalSince1970.rounded(.down)),
            expiresAt: Int64(request.expiresAt.timeIntervalSince1970.rounded(.down)), purpose: request.purpose
        ).digest
    }
}

import Crypto
import Foundation
import TwofoldAPI
import TwofoldCore
import TwofoldDevice

/// "Approve on your phone" as a phone answers: the decision signed by its device key over the
/// request as shown.
enum PushSteps {
    /// The phone's answer to `request`, signed by `key`.
    static func decision(
        _ request: PushApprovalDTO, _ decision: PushApprovalMessage.Decision, number: Int? = nil,
        key: SoftwareDeviceKey
    ) throws -> PushDecisionRequest {
        let shown = PushApprovalMessage.Shown(
            requestID: request.requestId, choices: request.choices, asking: request.asking, place: request.place,
            createdAt: Int64(request.createdAt.timeIntervalSince1970.rounded(.down)),
            expiresAt: Int64(request.expiresAt.timeIntervalSince1970.rounded(.down)), purpose: request.purpose)
        let message = PushApprovalMessage.signed(
            requestID: request.requestId, number: number, decision: decision, digest: shown.digest)
        let signature = try key.privateKey.signature(for: message).derRepresentation
        return PushDecisionRequest(
            requestId: request.requestId, decision: decision.rawValue, number: number,
            signature: signature.base64EncodedString())
    }
}

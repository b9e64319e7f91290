import Foundation
import TwofoldAPI
import Vapor

/// "Approve on your phone" over JSON (issue Z): the signing-in side with its login flow, the
/// phone with its bearer token and its device in the path.
struct PushController: EndpointCollection {
    let push: PushApprovals
    let channel: PhoneChannel
    let secondStep: SecondStep
    let callers: Callers
    /// How the remembered device's cookie is set, as the other second steps set it.
    let trustedDeviceLifetime: TimeInterval
    let cookies: CookieRules

    func boot(routes: EndpointRoutes) {
        routes.on(API.Push.start, use: start)
        routes.on(API.Push.status, use: status)
        routes.on(API.Push.complete, reply: complete)
        routes.on(API.Push.pending, use: pending)
        routes.on(API.Push.decide, use: decide)
        routes.on(API.Push.stepUpStart, use: stepUpStart)
        routes.on(API.Push.stepUpStatus, use: stepUpStatus)
        routes.on(API.Push.setPushToken, use: setPushToken)
        routes.on(API.Push.forgetPushToken, use: forgetPushToken)
    }

    @Sendable func start(request: Request, body: PushStartRequest) async throws -> PushStartResponse {
        try await push.start(
            flow: try LoginFlowService.token(otpFlowId: body.otpFlowId, tempToken: body.tempToken),
            origin: request.origin)
    }

    @Sendable func status(request: Request, body: PushStatusRequest) async throws -> PushStatusResponse {
        try await push.status(body)
    }

    @Sendable func complete(request: Request, body: PushCompleteRequest) async throws -> Reply<SecondStepResponse> {
        try await secondStep.complete(
            .init(
                flow: try LoginFlowService.token(otpFlowId: body.otpFlowId, tempToken: body.tempToken),
                method: .push, pushRequest: body.requestId, trustDevice: body.trustDevice ?? false),
            origin: request.origin, on: request.eventLoop
        ).reply(cookies: cookies, trustedDeviceLifetime: trustedDeviceLifetime)
    }

    @Sendable func pending(request: Request, _: NoContent) async throws -> PushApprovalsResponse {
        let query: PushWaitQuery = try request.query()
        return try await push.pending(
            deviceID: request.parameters.get("deviceID") ?? "", user: try await request.currentUser(in: callers),
            wait: query.wait, after: query.after)
    }

    @Sendable func decide(request: Request, body: PushDecisionRequest) async throws -> PushDecisionResponse {
        try await push.decide(
            deviceID: request.parameters.get("deviceID") ?? "", body, user: try await request.currentUser(in: callers),
            origin: request.origin)
    }

    @Sendable func stepUpStart(request: Request, _: NoContent) async throws -> PushStartResponse {
        try await push.startStepUp(caller: try request.caller, origin: request.origin)
    }

    @Sendable func stepUpStatus(request: Request, body: PushStepUpStatusRequest) async throws -> PushStatusResponse {
        try await push.stepUpStatus(body, caller: try request.caller)
    }

    @Sendable func setPushToken(request: Request, body: PushTokenRequest) async throws -> SuccessResponse {
        try await channel.setToken(
            deviceID: request.parameters.get("deviceID") ?? "", body, caller: try request.caller,
            user: try await request.currentUser(in: callers))
    }

    @Sendable func forgetPushToken(request: Request, _: NoContent) async throws -> SuccessResponse {
        try await channel.forgetToken(
            deviceID: request.parameters.get("deviceID") ?? "", user: try await request.currentUser(in: callers))
    }
}

import Foundation
import TwofoldAPI
import Vapor

/// Seed 004's device-bound keys over JSON, shapes verbatim: enrolment and method changes
/// (`DeviceEnrolment`; bearer, and the sign-in policy), challenge-response sign-in with the
/// device key and the SMS fallback (`DeviceSignIn`), device listings for the owner or an
/// admin. See docs/seed-divergences.md for where it departs from the seed and why.
struct DeviceKeyController: EndpointCollection {
    let enrolment: DeviceEnrolment
    let signIn: DeviceSignIn
    let callers: Callers

    func boot(routes: EndpointRoutes) {
        routes.on(API.DeviceKeys.enroll, use: enroll)
        routes.on(API.DeviceKeys.unenroll, use: unenroll)
        routes.on(API.DeviceKeys.upgrade, use: upgrade)
        routes.on(API.DeviceKeys.downgrade, use: downgrade)
        routes.on(API.DeviceKeys.devices, use: devices)
        routes.on(API.DeviceKeys.status, use: status)
        routes.on(API.DeviceKeys.initiate, use: initiate)
        routes.on(API.DeviceKeys.verifySignature, use: verifySignature)
        routes.on(API.DeviceKeys.requestOTP, use: requestOTP)
        routes.on(API.DeviceKeys.verifyOTP, use: verifyOTP)
        routes.on(API.SecondStep.deviceKeyChallenge, use: loginFlowChallenge)
        routes.on(API.Auth.stepUpDeviceKeyChallenge, use: stepUpChallenge)
    }

    // MARK: Enrolment

    @Sendable func enroll(request: Request, body: DeviceEnrollRequest) async throws -> DeviceEnrollResponse {
        try await enrolment.enroll(
            body, user: try await request.currentUser(in: callers), caller: try request.caller,
            origin: request.origin)
    }

    @Sendable func unenroll(request: Request, body: DeviceRequest) async throws -> DeviceMessageResponse {
        try await enrolment.unenroll(
            body, user: try await request.currentUser(in: callers), caller: try request.caller,
            origin: request.origin)
    }

    /// SMS → key, or a new key for a key device (seed 004 scenarios 9 and 10).
    @Sendable func upgrade(request: Request, body: DeviceUpgradeRequest) async throws -> DeviceMethodResponse {
        try await enrolment.upgrade(
            body, user: try await request.currentUser(in: callers), caller: try request.caller,
            origin: request.origin)
    }

    /// Key → SMS (seed 004 scenario 8: the device's security was removed, so its key is gone).
    @Sendable func downgrade(request: Request, body: DeviceRequest) async throws -> DeviceMethodResponse {
        try await enrolment.downgrade(
            body, user: try await request.currentUser(in: callers), caller: try request.caller,
            origin: request.origin)
    }

    // MARK: Listings

    @Sendable func devices(request: Request, _: NoContent) async throws -> DeviceListResponse {
        try await enrolment.devices(named: request.parameters.get("username") ?? "", caller: try request.caller)
    }

    @Sendable func status(request: Request, _: NoContent) async throws -> DeviceStatusResponse {
        try await enrolment.status(of: request.parameters.get("deviceID") ?? "", caller: try request.caller)
    }

    // MARK: Sign-in

    @Sendable func initiate(request: Request, body: DeviceRequest) async throws -> DeviceChallengeResponse {
        try await signIn.initiate(body, address: request.clientAddress)
    }

    @Sendable func loginFlowChallenge(request: Request, body: DeviceKeyChallengeRequest) async throws
        -> DeviceChallengeResponse
    {
        try await signIn.loginFlowChallenge(body)
    }

    @Sendable func stepUpChallenge(request: Request, body: StepUpDeviceKeyChallengeRequest) async throws
        -> DeviceChallengeResponse
    {
        try await signIn.stepUpChallenge(body, user: try await request.currentUser(in: callers))
    }

    @Sendable func verifySignature(request: Request, body: VerifySignatureRequest) async throws -> DeviceTokenResponse {
        try await signIn.verifySignature(body, address: request.clientAddress, origin: request.origin)
    }

    @Sendable func requestOTP(request: Request, body: RequestOTPRequest) async throws -> RequestOTPResponse {
        try await signIn.requestOTP(body, address: request.clientAddress, logger: request.logger)
    }

    @Sendable func verifyOTP(request: Request, body: DeviceVerifyOTPRequest) async throws -> DeviceTokenResponse {
        try await signIn.verifyOTP(body, address: request.clientAddress, origin: request.origin)
    }
}

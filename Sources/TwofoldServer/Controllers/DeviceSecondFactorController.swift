import Foundation
import TwofoldAPI
import Vapor

/// Seed 001's device second factor over JSON (`DeviceFactors`): every route acts on one of the
/// caller's own devices (`/device/{deviceId}/…`, bearer token).
struct DeviceSecondFactorController: EndpointCollection {
    let factors: DeviceFactors
    let callers: Callers

    func boot(routes: EndpointRoutes) {
        routes.on(API.DeviceFactors.status, use: status)
        routes.on(API.DeviceFactors.setPIN, use: setPIN)
        routes.on(API.DeviceFactors.verifyPIN, use: verifyPIN)
        routes.on(API.DeviceFactors.addBiometrics, use: addBiometrics)
        routes.on(API.DeviceFactors.biometricChallenge, use: biometricChallenge)
        routes.on(API.DeviceFactors.verifyBiometrics, use: verifyBiometrics)
        routes.on(API.DeviceFactors.removeBiometrics, use: removeBiometrics)
        routes.on(API.DeviceFactors.biometricsInvalidated, use: biometricsInvalidated)
    }

    @Sendable func status(request: Request, _: NoContent) async throws -> DeviceSecondFactorResponse {
        factors.status(of: try await device(request))
    }

    @Sendable func setPIN(request: Request, body: DevicePINChangeRequest) async throws -> DeviceSecondFactorResponse {
        try await factors.setPIN(body, device: try await device(request, changing: .configure), origin: request.origin)
    }

    @Sendable func verifyPIN(request: Request, body: DevicePINRequest) async throws -> DeviceFactorVerifiedResponse {
        try await factors.verifyPIN(body.pin, device: try await device(request), origin: request.origin)
    }

    @Sendable func addBiometrics(
        request: Request, body: DeviceBiometricsAddRequest
    ) async throws -> DeviceSecondFactorResponse {
        try await factors.addBiometrics(
            body, device: try await device(request, changing: .configure), origin: request.origin)
    }

    @Sendable func biometricChallenge(request: Request, _: NoContent) async throws -> BiometricChallengeResponse {
        try await factors.biometricChallenge(for: try await device(request))
    }

    @Sendable func verifyBiometrics(
        request: Request, body: BiometricSignature
    ) async throws -> DeviceFactorVerifiedResponse {
        try await factors.verifyBiometrics(
            body, device: try await device(request, changing: .configure), origin: request.origin)
    }

    @Sendable func removeBiometrics(
        request: Request, body: DeviceFactorProof
    ) async throws -> DeviceSecondFactorResponse {
        try await factors.removeBiometrics(
            body, device: try await device(request, changing: .configure), origin: request.origin)
    }

    @Sendable func biometricsInvalidated(request: Request, _: NoContent) async throws -> DeviceSecondFactorResponse {
        try await factors.biometricsInvalidated(
            device: try await device(request, changing: .signOut), origin: request.origin)
    }

    /// The caller's device named in the path, after the policy when the call changes it.
    private func device(_ request: Request, changing change: SignInChange? = nil) async throws -> DeviceRecord {
        try await factors.callersDevice(
            request.parameters.get("deviceID") ?? "", user: try await request.currentUser(in: callers),
            caller: try request.caller, changing: change)
    }
}

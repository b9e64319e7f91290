import Foundation
import TwofoldAPI
import Vapor

/// Seed 001's device second factor over JSON (`DeviceFactors`): every route acts on one of the
/// caller's own devices (`/device/{deviceId}/…`, bearer token).
struct DeviceSecondFactorController: EndpointCollection {
    let factors: DeviceFactors
    let users: any UserStore

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

    @Sendable func status(request: Request) async throws -> Response {
        try Response.json(factors.status(of: try await device(request)))
    }

    @Sendable func setPIN(request: Request) async throws -> Response {
        let device = try await device(request, changing: .configure)
        let body = try request.content.decode(DevicePINChangeRequest.self)
        return try Response.json(try await factors.setPIN(body, device: device, origin: request.origin))
    }

    @Sendable func verifyPIN(request: Request) async throws -> Response {
        let device = try await device(request)
        let body = try request.content.decode(DevicePINRequest.self)
        return try Response.json(try await factors.verifyPIN(body.pin, device: device, origin: request.origin))
    }

    @Sendable func addBiometrics(request: Request) async throws -> Response {
        let device = try await device(request, changing: .configure)
        let body = try request.content.decode(DeviceBiometricsAddRequest.self)
        return try Response.json(try await factors.addBiometrics(body, device: device, origin: request.origin))
    }

    @Sendable func biometricChallenge(request: Request) async throws -> Response {
        try Response.json(try await factors.biometricChallenge(for: try await device(request)))
    }

    @Sendable func verifyBiometrics(request: Request) async throws -> Response {
        let device = try await device(request, changing: .configure)
        let body = try request.content.decode(BiometricSignature.self)
        return try Response.json(try await factors.verifyBiometrics(body, device: device, origin: request.origin))
    }

    @Sendable func removeBiometrics(request: Request) async throws -> Response {
        let device = try await device(request, changing: .configure)
        let body = try request.content.decode(DeviceFactorProof.self)
        return try Response.json(try await factors.removeBiometrics(body, device: device, origin: request.origin))
    }

    @Sendable func biometricsInvalidated(request: Request) async throws -> Response {
        let device = try await device(request, changing: .signOut)
        return try Response.json(try await factors.biometricsInvalidated(device: device, origin: request.origin))
    }

    /// The caller's device named in the path, after the policy when the call changes it.
    private func device(_ request: Request, changing change: SignInChange? = nil) async throws -> DeviceRecord {
        try await factors.callersDevice(
            request.parameters.get("deviceID") ?? "", user: try await request.currentUser(in: users),
            caller: try request.caller, changing: change)
    }
}

import Fluent
import Foundation
import TwofoldAPI
import Vapor

/// The second step of a login flow (seeds 000, 002, 003): a TOTP or backup code against the
/// `otpFlowId`/`tempToken` that `POST /auth/login` answered.
struct SecondStepController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.post("2fa", "totp", "validate", use: validateTOTP)
        routes.post("auth", "backup-codes", "verify", use: verifyBackupCode)
        routes.post("2fa", "backup-codes", "verify", use: verifyBackupCode)
        routes.post("auth", "mfa", "verify-login", use: verifyLogin)
    }

    @Sendable func validateTOTP(request: Request) async throws -> Response {
        let body = try request.content.decode(TOTPValidateRequest.self)
        return try await Self.complete(
            flow: body.tempToken, method: "totp", code: body.code, trustDevice: body.trustDevice ?? false,
            request: request)
    }

    @Sendable func verifyBackupCode(request: Request) async throws -> Response {
        let body = try request.content.decode(BackupCodeVerifyRequest.self)
        guard let flow = body.otpFlowId ?? body.tempToken else {
            throw InputValidation.failure(["otpFlowId": "otpFlowId or tempToken is required"])
        }
        return try await Self.complete(
            flow: flow, method: "backup", code: body.backupCode, trustDevice: body.trustDevice ?? false,
            request: request)
    }

    /// Seed 002's form: the flow in the body or as the bearer token; `method` defaults to `totp`.
    @Sendable func verifyLogin(request: Request) async throws -> Response {
        let body = try request.content.decode(MFAVerifyLoginRequest.self)
        guard let flow = body.otpFlowId ?? body.tempToken ?? request.headers.bearerAuthorization?.token else {
            throw InputValidation.failure(["otpFlowId": "otpFlowId, tempToken or a bearer flow token is required"])
        }
        let method = body.method ?? "totp"
        guard ["totp", "backup"].contains(method) else {
            throw InputValidation.failure(["method": "must be totp or backup"])
        }
        return try await Self.complete(
            flow: flow, method: method, code: body.code, trustDevice: body.trustDevice ?? false, request: request)
    }

    /// Checks the code for the flow's user, consumes the flow once, and starts the session.
    static func complete(
        flow token: String, method: String, code: String, trustDevice: Bool, request: Request
    ) async throws -> Response {
        guard !token.isEmpty, token.count <= 128 else { throw LoginFlowService.unknownFlow }
        let flow = try await LoginFlowService.active(token, request: request)
        guard let user = try await User.find(flow.userID, on: request.db) else { throw LoginFlowService.unknownFlow }
        guard user.status == .active else {
            throw Problem(
                status: 403, code: .accountLocked, title: "Account locked",
                detail: "This account is locked; an administrator can unlock it.")
        }
        switch try await SecondFactors.verify(method: method, code: code, for: user, request: request) {
        case .notEnabled:
            throw Problem(
                status: 422, code: .validationFailed, title: "Method not available",
                detail: "This account cannot sign in with \(method).", errors: ["method": "not enabled"])
        case .verified(let amr, let remaining):
            try await LoginFlowService.consume(flow, request: request)
            let tokens = try await SessionService.start(
                user: user, methods: [flow.firstFactor, amr, "mfa"], request: request)
            try await AuditLog.record(
                .loginSucceeded, user: user.id, detail: "\(flow.firstFactor)+\(method)", request: request)
            let deviceToken =
                trustDevice ? try await TrustedDeviceService.remember(userID: flow.userID, request: request) : nil
            let response = try AuthController.json(
                SecondStepResponse(
                    tokens: tokens, backupCodesRemaining: remaining,
                    backupCodesLow: remaining.map { $0 <= BackupCodeService.warningThreshold },
                    trustedDeviceToken: deviceToken, serverTime: request.twofold.clock.now()))
            if let deviceToken {
                response.cookies[TrustedDeviceService.cookie] = TrustedDeviceService.cookieValue(deviceToken)
            }
            return response
        }
    }
}

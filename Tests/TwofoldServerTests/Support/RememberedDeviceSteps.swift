import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import VaporTesting

/// Remembered devices: trusted at the second step, then a sign-in that carries the cookie.
enum RememberedDeviceSteps {
    /// Signs in with TOTP and `trustDevice`; returns the device token and the response's cookie.
    static func trust(_ app: Application, secret: [UInt8], clock: TestClock) async throws -> (String, String?) {
        let flow = try await TOTPSteps.startLogin(app)
        var result: (String, String?) = ("", nil)
        try await app.raw(
            .POST, API.SecondStep.validateTOTP.path(), headers: jsonHeaders,
            body: ByteBuffer(
                string: #"{"tempToken":"\#(flow)","code":"\#(try TOTPSteps.code(secret, clock))","trustDevice":true}"#)
        ) { response in
            #expect(response.status == .ok)
            result.0 = try #require(try response.decode(SecondStepResponse.self).trustedDeviceToken)
            result.1 = response.headers.first(name: .setCookie)
        }
        return result
    }

    /// Signs alice in with the password, sending `headers` (the device's cookie or
    /// `X-Trusted-Device`, and where the request comes from): the status, and whether a second
    /// step was asked for.
    static func login(_ app: Application, headers: HTTPHeaders) async throws -> (UInt, Bool) {
        let fields = Dictionary(headers.map { ($0.name, $0.value) }) { first, second in "\(first), \(second)" }
        do {
            let outcome = try await app.client().send(
                API.Auth.login, LoginRequest(username: "alice", password: Accounts.password), headers: fields)
            if case .secondStep = outcome { return (200, true) }
            return (200, false)
        } catch let refused as APIError {
            return (UInt(refused.status), false)
        }
    }
}

import Foundation
import Testing
import TwofoldAPI
import VaporTesting

/// Remembered devices: trusted at the second step, then a sign-in that carries the cookie.
enum RememberedDeviceSteps {
    /// Signs in with TOTP and `trustDevice`; returns the device token and the response's cookie.
    static func trust(_ app: Application, secret: [UInt8], clock: TestClock) async throws -> (String, String?) {
        let flow = try await TOTPSteps.startLogin(app)
        var result: (String, String?) = ("", nil)
        try await app.testing().test(
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

    static func login(_ app: Application, headers: HTTPHeaders) async throws -> (UInt, Bool) {
        var result: (UInt, Bool) = (0, false)
        try await app.testing().test(
            .POST, API.Auth.login.path(), headers: headers,
            body: json(["username": "alice", "password": Accounts.password])
        ) { response in
            result = (response.status.code, response.body.string.contains("requires2FA"))
        }
        return result
    }
}

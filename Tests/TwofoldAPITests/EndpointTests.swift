import Foundation
import Testing
import TwofoldAPI

@Suite struct EndpointTests {
    @Test func aPathFillsItsParametersEscaped() {
        #expect(API.Auth.login.path() == API.Auth.login.path())
        #expect(
            API.Admin.unlock.path("3F2504E0-4F89-11D3-9A0C-0305E82C3301")
                == "api/v1/admin/users/3F2504E0-4F89-11D3-9A0C-0305E82C3301/unlock")
        #expect(API.DeviceKeys.devices.path("a b/c?d") == "api/v1/devices/a%20b%2Fc%3Fd")
        #expect(API.Admin.unlock.components[4] == .parameter("userID"))
        #expect(API.Auth.login.description == "POST /api/v1/auth/login")
    }

    @Test func everyAPIPathIsUnderTheBaseOrAnOperation() {
        let operations = Set([
            API.Operations.health.path(), API.Operations.ready.path(), API.Operations.metrics.path(),
            API.Operations.openAPI.path(), API.Operations.jwks.path(), API.Operations.relatedOrigins.path(),
            API.Operations.appleAppSiteAssociation.path(),
        ])
        for endpoint in API.all {
            #expect(
                endpoint.template.hasPrefix(API.base + "/") || operations.contains(endpoint.template), "\(endpoint)")
        }
    }

    @Test func loginOutcomeTellsTheTwoAnswersApart() throws {
        let decoder = Wire.decoder()
        let challenge = #"""
            {"requires2FA":true,"otpFlowId":"f","tempToken":"f","availableMethods":["totp"],
             "expiresAt":"2026-11-24T10:00:00Z","serverTime":"2026-11-24T09:55:00Z"}
            """#
        guard case .secondStep(let step) = try decoder.decode(LoginOutcome.self, from: Data(challenge.utf8)) else {
            Issue.record("a challenge read as tokens")
            return
        }
        #expect(step.availableMethods == [.totp])
        let tokens = #"""
            {"accessToken":{"token":"a","expiresAt":"2026-11-24T10:00:00Z"},
             "refreshToken":{"token":"r","expiresAt":"2026-12-24T10:00:00Z"},
             "user":{"id":"3F2504E0-4F89-11D3-9A0C-0305E82C3301","username":"u","email":"u@example.com",
                     "role":"user","status":"active","createdAt":"2026-11-24T09:00:00Z"}}
            """#
        guard case .signedIn(let signedIn) = try decoder.decode(LoginOutcome.self, from: Data(tokens.utf8)) else {
            Issue.record("tokens read as a challenge")
            return
        }
        #expect(signedIn.accessToken.token == "a")
    }
}

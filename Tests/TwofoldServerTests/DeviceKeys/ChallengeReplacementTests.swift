import Foundation
import Testing
import TwofoldAPI
import TwofoldDevice
import VaporTesting

@testable import TwofoldServer

/// Issue T: one live challenge per (user or device, purpose, login flow), replaced rather than
/// added, and a per-user bound on how many are asked for.
@Suite(.tags(.database)) struct ChallengeReplacementTests {
    typealias Device = DeviceKeySteps

    @Test func aNewStepUpChallengeRetiresTheLastAndSignInChallengesStay() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let phone = SoftwareDeviceKey()
            #expect(try await Device.enroll(app, token: tokens.accessToken.token, phone: phone).0 == 200)
            let session = try await Device.stepUp(app, token: tokens.accessToken.token, phone: phone)
            func challenge() async throws -> DeviceChallengeResponse {
                let (status, body) = try await Device.post(
                    app, API.Auth.stepUpDeviceKeyChallenge.path(), ["deviceId": "iphone-1"], token: session)
                #expect(status == 200, "\(body)")
                return try Device.decode(DeviceChallengeResponse.self, body)
            }
            let first = try await challenge()
            let second = try await challenge()
            for (issued, expected) in [(first, 409 as UInt), (second, 200)] {
                let (status, body) = try await Device.send(
                    app, .POST, API.Auth.stepUp.path(),
                    StepUpRequest(
                        method: .deviceKey, deviceId: "iphone-1", challengeId: issued.challengeId,
                        signature: try phone.sign(challenge: issued.challenge)), token: session)
                #expect(status == expected, "\(body)")
            }
            // A sign-in challenge anyone may ask for: a stranger's must not cancel the owner's.
            let owners = try await Device.challenge(app)
            _ = try await Device.challenge(app)
            let (signedIn, body) = try await Device.verify(
                app, owners, signature: try phone.sign(challenge: owners.challenge))
            #expect(signedIn == 200, "\(body)")
        }
    }

    @Test func oneUserAsksForAtMostThirtyChallengesAtOnce() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let phone = SoftwareDeviceKey()
            #expect(try await Device.enroll(app, token: tokens.accessToken.token, phone: phone).0 == 200)
            let session = try await Device.stepUp(app, token: tokens.accessToken.token, phone: phone)
            var statuses: [UInt] = []
            for index in 0..<32 {
                statuses.append(
                    try await Device.post(
                        app, API.Auth.stepUpDeviceKeyChallenge.path(), ["deviceId": "iphone-1"], token: session,
                        from: "10.1.\(index).1"
                    ).0)
            }
            #expect(statuses.filter { $0 == 429 }.count >= 2, "\(statuses)")
            clock.advance(by: 10)
            #expect(
                try await Device.post(
                    app, API.Auth.stepUpDeviceKeyChallenge.path(), ["deviceId": "iphone-1"], token: session
                ).0 == 200, "the bucket refills")
        }
    }
}

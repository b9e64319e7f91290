import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import VaporTesting

@Suite(.tags(.database)) struct TrustedDeviceTests {
    @Test func aRememberedDeviceSkipsTheSecondStepForThirtyDays() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let (device, cookie) = try await RememberedDeviceSteps.trust(app, secret: secret, clock: clock)
            let setCookie = try #require(cookie)
            // Served to http://localhost (the test server's origins): not `Secure`, which a browser
            // could drop there; for the whole site, so a sign-in page at the root sees it.
            #expect(setCookie.hasPrefix("twofold_trusted_device=\(device);"))
            #expect(
                setCookie.contains("HttpOnly") && !setCookie.contains("Secure") && setCookie.contains("SameSite=Strict")
                    && setCookie.contains("Path=/;"))

            var headers = HTTPHeaders.client("10.0.0.1")
            headers.add(name: "X-Trusted-Device", value: device)
            #expect(try await RememberedDeviceSteps.login(app, headers: headers) == (200, false))
            var withCookie = HTTPHeaders.client("10.0.0.1")
            withCookie.add(name: .cookie, value: "twofold_trusted_device=\(device)")
            #expect(try await RememberedDeviceSteps.login(app, headers: withCookie) == (200, false))
            // Without it, or for another user, the second step is still asked for.
            #expect(try await RememberedDeviceSteps.login(app, headers: .client("10.0.0.1")) == (200, true))

            clock.advance(by: 30 * 24 * 3600)
            #expect(
                try await RememberedDeviceSteps.login(app, headers: headers) == (200, true),
                "30 days later it has expired")
        }
    }

    /// Served at an HTTPS origin, the cookie is `Secure` and `__Host-` named, and that name is the
    /// one the sign-in reads.
    @Test func overHTTPSTheCookieIsSecureAndHostPrefixed() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock, adjust: { $0.webAuthn.origins = ["https://login.example.com"] }) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let (device, cookie) = try await RememberedDeviceSteps.trust(app, secret: secret, clock: clock)
            let setCookie = try #require(cookie)
            #expect(setCookie.hasPrefix("__Host-twofold_trusted_device=\(device);"))
            #expect(setCookie.contains("Secure") && setCookie.contains("Path=/;") && !setCookie.contains("Domain"))
            var prefixed = HTTPHeaders.client("10.0.0.1")
            prefixed.add(name: .cookie, value: "__Host-twofold_trusted_device=\(device)")
            #expect(try await RememberedDeviceSteps.login(app, headers: prefixed) == (200, false))
            // The unprefixed name is not this server's cookie: a subdomain could have set it.
            var plain = HTTPHeaders.client("10.0.0.1")
            plain.add(name: .cookie, value: "twofold_trusted_device=\(device)")
            #expect(try await RememberedDeviceSteps.login(app, headers: plain) == (200, true))
        }
    }

    @Test func rememberedDevicesAreListedAndRevoked() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let (device, _) = try await RememberedDeviceSteps.trust(app, secret: secret, clock: clock)
            let client = app.client()
            let listed = try await client.send(API.TwoFactor.trustedDevices, bearer: tokens.accessToken.token)
            let entry = try #require(listed.devices.first)
            let factors = try await client.send(API.TwoFactor.status, bearer: tokens.accessToken.token)
            #expect(factors.trustedDevices.count == 1)
            #expect(listed.devices.count == 1)
            #expect(!(String(data: try Wire.encoder().encode(listed), encoding: .utf8) ?? "").contains(device))

            let bob = try await Accounts.signUp(app, "bob")
            let refused = try await refusal {
                try await client.send(API.TwoFactor.revokeTrustedDevice, "\(entry.id)", bearer: bob.accessToken.token)
            }
            #expect(refused.status == 404, "not bob's to revoke")
            _ = try await client.send(
                API.TwoFactor.revokeTrustedDevice, "\(entry.id)", bearer: tokens.accessToken.token)
            var headers = HTTPHeaders.client("10.0.0.1")
            headers.add(name: "X-Trusted-Device", value: device)
            #expect(try await RememberedDeviceSteps.login(app, headers: headers) == (200, true))
        }
    }

    @Test func resettingSecondFactorsRevokesRememberedDevices() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let (device, _) = try await RememberedDeviceSteps.trust(app, secret: secret, clock: clock)
            clock.advance(by: 30)
            let older = try await TOTPSteps.laterSession(app, secret: secret, clock: clock)
            let client = app.client()
            let stepped = try await client.send(
                API.Auth.stepUp, StepUpRequest(method: .totp, code: try TOTPSteps.code(secret, clock)), bearer: older)
            // Removing the only factor: the password with it.
            let both = try await Accounts.stepUpWithPassword(app, token: stepped.accessToken.token)
            _ = try await client.send(API.TwoFactor.totpDelete, bearer: both)
            // Enable again: the old remembered device no longer counts.
            clock.advance(by: 30)
            var again = tokens
            again.accessToken.token = both
            _ = try await TOTPSteps.enable(app, tokens: again, clock: clock)
            var headers = HTTPHeaders.client("10.0.0.1")
            headers.add(name: "X-Trusted-Device", value: device)
            #expect(try await RememberedDeviceSteps.login(app, headers: headers) == (200, true))
        }
    }
}

import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import VaporTesting
import WebAuthn

@testable import TwofoldServer

/// Passkeys over HTTP (seed 000, issue F): registration, second step, passwordless, step-up,
/// managing them, and their product rules.
@Suite struct PasskeyTests {
    typealias Calls = PasskeyCalls

    @Test func registerThenSignInWithThePasskeyAfterThePassword() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let token = tokens.accessToken.token
            let options = try await Calls.creationOptions(app, token: token)
            #expect(options.rp == .init(id: "localhost", name: "Twofold"))
            #expect(Base64URL.decode(options.user.id) == PasskeyService.userHandle(tokens.user.id))
            #expect(options.user.name == "alice@example.com" && options.user.displayName == "alice")
            #expect(Base64URL.decode(options.challenge)?.count == 32)
            #expect(options.timeout == 120_000)
            #expect(options.pubKeyCredParams.map(\.alg) == [-7, -8, -35, -36, -37, -257])
            #expect(options.excludeCredentials.isEmpty)
            #expect(options.authenticatorSelection.residentKey == "preferred")
            #expect(options.authenticatorSelection.userVerification == "preferred")
            #expect(options.attestation == "none")

            let passkey = Passkey()
            let verify = try await Calls.post(
                app, API.Passkeys.registerVerify.path(), headers: .bearer(token),
                body: PasskeyRegistrationRequest(credential: passkey.registration(options), name: "  Work laptop "))
            #expect(verify.status == 200, "\(verify.text)")
            let registered = try verify.decode(PasskeyRegisteredResponse.self)
            #expect(registered.backupCodes?.count == 10, "the first second factor hands out backup codes")
            #expect(registered.credential.id == passkey.id && registered.credential.name == "Work laptop")
            #expect(registered.credential.deviceBound && !registered.credential.synced)
            #expect(registered.credential.transports == ["internal", "hybrid"])
            #expect(registered.credential.aaguid == "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa")
            #expect(registered.credential.provider == nil && registered.credential.lastUsedAt == nil)
            #expect(registered.credential.attestation == "none")

            let status = try await Calls.call(app, .GET, API.TwoFactor.status.path(), headers: .bearer(token))
                .decode(TwoFactorStatus.self)
            #expect(status.isEnabled && status.webauthn.enabled && status.primaryMethod == .webauthn)
            #expect(status.webauthn.credentials.map(\.id) == [passkey.id])

            clock.advance(by: 60)
            let flow = try await Calls.passwordStep(app)
            #expect(flow.availableMethods == [.webauthn, .backup], "passkeys are offered first")
            let request = try await Calls.flowOptions(app, flow: flow.otpFlowId)
            #expect(request.allowCredentials.map(\.id) == [passkey.id])
            #expect(request.allowCredentials.first?.transports == ["internal", "hybrid"])
            #expect(request.rpId == "localhost" && request.userVerification == "preferred")
            var device = passkey
            let signedIn = try await Calls.post(
                app, API.Passkeys.flowVerify.path(),
                body: PasskeyFlowVerifyRequest(
                    otpFlowId: flow.otpFlowId, credential: try device.assertion(request.challenge)))
            #expect(signedIn.status == 200, "\(signedIn.text)")
            let session = try signedIn.decode(SecondStepResponse.self)
            #expect(try await Calls.methods(app, token: session.accessToken.token) == ["pwd", "hwk", "mfa"])
            #expect(session.passkeyName == "Work laptop", "which passkey signed in, by its name")
            // The flow is spent.
            let replay = try await Calls.post(
                app, API.Passkeys.flowVerify.path(),
                body: PasskeyFlowVerifyRequest(
                    otpFlowId: flow.otpFlowId, credential: try device.assertion(request.challenge)))
            #expect(replay.status == 409)

            // The next registration's options (from the stepped-up session) exclude it.
            let again = try await Calls.creationOptions(app, token: session.accessToken.token)
            #expect(again.excludeCredentials.map(\.id) == [passkey.id])
            let listed = try await Calls.call(
                app, .GET, API.Passkeys.list.path(), headers: .bearer(session.accessToken.token)
            ).decode(PasskeysResponse.self)
            #expect(listed.credentials.first?.lastUsedAt == clock.now)
            #expect(try await AuditQueries.count(type: "login.succeeded", on: app) == 2)
        }
    }

    @Test func aFailedPasskeyLeavesTheFlowForABackupCode() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            var passkey = Passkey()
            let codes = try #require(
                try await Calls.register(app, token: tokens.accessToken.token, passkey).backupCodes)
            let flow = try await Calls.passwordStep(app, address: "10.0.0.2")
            let options = try await Calls.flowOptions(app, flow: flow.otpFlowId)
            let failed = try await Calls.post(
                app, API.Passkeys.flowVerify.path(),
                body: PasskeyFlowVerifyRequest(
                    otpFlowId: flow.otpFlowId,
                    credential: try passkey.assertion(options.challenge, origin: "https://phish.test")))
            #expect(failed.status == 422 && failed.reason == "origin_not_allowed")
            let fallback = try await Calls.post(
                app, API.SecondStep.verifyBackupCodeSeed000.path(),
                body: BackupCodeVerifyRequest(otpFlowId: flow.otpFlowId, backupCode: codes[0]))
            #expect(fallback.status == 200, "\(fallback.text)")
            let session = try fallback.decode(SecondStepResponse.self)
            #expect(try await Calls.methods(app, token: session.accessToken.token) == ["pwd", "otp", "mfa"])
        }
    }

    @Test func aSyncedPasskeySignsInAloneByItsUserHandle() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            var passkey = Passkey(flags: [.userPresent, .userVerified, .backupEligible, .backedUp], signCount: 0)
            let registered = try await Calls.register(app, token: tokens.accessToken.token, passkey)
            #expect(registered.credential.synced && !registered.credential.deviceBound)
            #expect(registered.credential.name == "Passkey")

            let options = try await Calls.signInOptions(app)
            #expect(options.allowCredentials.isEmpty, "the browser offers what it holds (conditional UI)")
            #expect(options.userVerification == "required")
            let answer = try await Calls.post(
                app, API.Passkeys.signInVerify.path(),
                body: PasskeySignInRequest(
                    credential: try passkey.assertion(options.challenge, userHandle: tokens.user.id)))
            #expect(answer.status == 200, "\(answer.text)")
            let signedIn = try answer.decode(AuthTokensResponse.self)
            #expect(signedIn.user.id == tokens.user.id)
            #expect(signedIn.passkeyName == "Passkey")
            #expect(try await Calls.methods(app, token: signedIn.accessToken.token) == ["swk", "mfa"])
            // A synced passkey's counter stays zero, and that is fine.
            let next = try await Calls.signInOptions(app)
            #expect(
                try await Calls.post(
                    app, API.Passkeys.signInVerify.path(),
                    body: PasskeySignInRequest(
                        credential: try passkey.assertion(next.challenge, userHandle: tokens.user.id))
                ).status == 200)
        }
    }

    @Test func aLockedAccountCannotSignInWithAPasskeyAlone() async throws {
        try await withTestApp { app in
            var passkey = Passkey()
            let tokens = try await Calls.signUpWithPasskey(app, passkey)
            #expect(try await app.twofold.users.lock(userID: tokens.user.id, now: Date()))
            let options = try await Calls.signInOptions(app)
            let before = try await Calls.state(app)
            let answer = try await Calls.post(
                app, API.Passkeys.signInVerify.path(),
                body: PasskeySignInRequest(
                    credential: try passkey.assertion(options.challenge, userHandle: tokens.user.id)))
            #expect(answer.status == 403 && answer.code == "account_locked", "\(answer.text)")
            #expect(try await Calls.state(app) == before, "neither the challenge nor the counter is used")
        }
    }

    @Test func aPasskeyStepsUpASessionThatDidNotAddIt() async throws {
        try await withTestApp { app in
            var passkey = Passkey()
            let tokens = try await Calls.signUpWithPasskey(app, passkey)
            // The session that added the passkey cannot step up with it.
            var options = try await Calls.post(
                app, API.Auth.stepUpPasskeyOptions.path(), headers: .bearer(tokens.accessToken.token)
            ).decode(PasskeyRequestOptions.self)
            let own = try await Calls.post(
                app, API.Auth.stepUp.path(), headers: .bearer(tokens.accessToken.token),
                body: StepUpRequest(method: .webauthn, credential: try passkey.assertion(options.challenge)))
            #expect(own.status == 403 && own.errors?["method"] == "was added in this session")

            let signedIn = try await Calls.post(
                app, API.Auth.login.path(), headers: .client("10.0.0.2"),
                body: ["username": "alice", "password": Accounts.password])
            let flow = try signedIn.decode(LoginChallengeResponse.self)
            // A fresh session signed in with the password and the passkey steps up with it.
            let request = try await Calls.flowOptions(app, flow: flow.otpFlowId)
            let session = try await Calls.post(
                app, API.Passkeys.flowVerify.path(),
                body: PasskeyFlowVerifyRequest(
                    tempToken: flow.otpFlowId, credential: try passkey.assertion(request.challenge))
            ).decode(SecondStepResponse.self)
            let token = session.accessToken.token
            options = try await Calls.post(app, API.Auth.stepUpPasskeyOptions.path(), headers: .bearer(token))
                .decode(PasskeyRequestOptions.self)
            #expect(options.allowCredentials.map(\.id) == [passkey.id])
            let stepUp = try await Calls.post(
                app, API.Auth.stepUp.path(), headers: .bearer(token),
                body: StepUpRequest(method: .webauthn, credential: try passkey.assertion(options.challenge)))
            #expect(stepUp.status == 200, "\(stepUp.text)")
            // A login flow's challenge does not step up, nor a step-up's complete a flow.
            let other = try await Calls.passwordStep(app, address: "10.0.0.3")
            let flowChallenge = try await Calls.flowOptions(app, flow: other.otpFlowId)
            let crossed = try await Calls.post(
                app, API.Auth.stepUp.path(), headers: .bearer(token),
                body: StepUpRequest(method: .webauthn, credential: try passkey.assertion(flowChallenge.challenge)))
            #expect(crossed.status == 422 && crossed.reason == "challenge_mismatch")
        }
    }

    @Test func renameAndDeleteWithStepUp() async throws {
        try await withTestApp { app in
            var passkey = Passkey()
            let tokens = try await Calls.signUpWithPasskey(app, passkey)
            let token = try await Calls.signInWithPasskey(app, &passkey)

            let renamed = try await Calls.call(
                app, .PATCH, API.Passkeys.rename.path(passkey.id), headers: .bearer(token),
                body: PasskeyRenameRequest(name: "YubiKey on my keyring"))
            #expect(renamed.status == 200 && (try? renamed.decode(PasskeyDTO.self).name) == "YubiKey on my keyring")
            for bad in ["", "   ", "tab\there", String(repeating: "x", count: 65)] {
                let refused = try await Calls.call(
                    app, .PATCH, API.Passkeys.rename.path(passkey.id), headers: .bearer(token),
                    body: PasskeyRenameRequest(name: bad))
                #expect(refused.status == 422, "\(bad.debugDescription)")
            }
            let unknown = try await Calls.call(
                app, .PATCH, API.Passkeys.rename.path("AAAA"), headers: .bearer(token),
                body: PasskeyRenameRequest(name: "x"))
            #expect(unknown.status == 404)

            // The sign-up session proved only the password: no step-up, no deletion.
            let refused = try await Calls.call(
                app, .DELETE, API.Passkeys.delete.path(passkey.id), headers: .bearer(tokens.accessToken.token))
            #expect(refused.status == 403 && refused.code == "step_up_required")
            // The password and the passkey, both just proven, remove it.
            let deleted = try await Calls.call(
                app, .DELETE, API.Passkeys.delete.path(passkey.id), headers: .bearer(token))
            #expect(deleted.status == 200, "\(deleted.text)")
            // Again: the account has no factor left to vouch, so the policy asks before the lookup.
            #expect(
                try await Calls.call(app, .DELETE, API.Passkeys.delete.path(passkey.id), headers: .bearer(token)).status
                    == 403)
            // The last factor gone: the backup codes go too, and a password signs in alone.
            let status = try await Calls.call(app, .GET, API.TwoFactor.status.path(), headers: .bearer(token))
                .decode(TwoFactorStatus.self)
            #expect(!status.isEnabled && !status.webauthn.enabled && status.backupCodes.remaining == 0)
            let login = try await Calls.post(
                app, API.Auth.login.path(), headers: .client("10.0.0.4"),
                body: ["username": "alice", "password": Accounts.password])
            #expect((try? login.decode(AuthTokensResponse.self)) != nil)
        }
    }

    @Test func addingAPasskeyToAProtectedAccountNeedsAStepUp() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            let options = try await Calls.creationOptions(app, token: tokens.accessToken.token)
            try await Calls.register(app, token: tokens.accessToken.token, Passkey())
            // The session proved only the password: once the account has a second factor, another
            // passkey needs a step-up, for new options and for options fetched before.
            let refused = try await Calls.post(
                app, API.Passkeys.registerOptions.path(), headers: .bearer(tokens.accessToken.token))
            #expect(refused.status == 403 && refused.code == "step_up_required")
            let early = try await Calls.post(
                app, API.Passkeys.registerVerify.path(), headers: .bearer(tokens.accessToken.token),
                body: PasskeyRegistrationRequest(credential: Passkey().registration(options)))
            #expect(early.status == 403 && early.code == "step_up_required")
            #expect(try await Calls.state(app)[1] == 1)
        }
    }

    @Test func anAutomaticUpgradeRegistersWithoutUserPresence() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            let passkey = Passkey(flags: [.backupEligible, .backedUp], signCount: 0)
            let options = try await Calls.creationOptions(app, token: tokens.accessToken.token)
            let asked = try await Calls.post(
                app, API.Passkeys.registerVerify.path(), headers: .bearer(tokens.accessToken.token),
                body: PasskeyRegistrationRequest(credential: passkey.registration(options)))
            #expect(asked.status == 422 && asked.reason == "user_not_present")
            let automatic = try await Calls.post(
                app, API.Passkeys.registerVerify.path(), headers: .bearer(tokens.accessToken.token),
                body: PasskeyRegistrationRequest(credential: passkey.registration(options), automaticUpgrade: true))
            #expect(automatic.status == 200, "\(automatic.text)")
        }
    }

    @Test func onlyTheOwnerRenamesOrDeletesAPasskey() async throws {
        try await withTestApp { app in
            let alices = Passkey()
            _ = try await Calls.signUpWithPasskey(app, alices)
            // Bob signs in with his own passkey: a recent second factor, so only ownership stands
            // between him and alice's.
            var bobs = Passkey()
            _ = try await Calls.signUpWithPasskey(app, bobs, "bob")
            let token = try await Calls.signInWithPasskey(app, &bobs, "bob")
            let rename = try await Calls.call(
                app, .PATCH, API.Passkeys.rename.path(alices.id), headers: .bearer(token),
                body: PasskeyRenameRequest(name: "Mine now"))
            #expect(rename.status == 404 && rename.code == "not_found")
            let delete = try await Calls.call(
                app, .DELETE, API.Passkeys.delete.path(alices.id), headers: .bearer(token))
            #expect(delete.status == 404 && delete.code == "not_found", "\(delete.text)")
            #expect(try await Calls.state(app)[1] == 2, "both passkeys stay")
            let listed = try await Calls.call(app, .GET, API.Passkeys.list.path(), headers: .bearer(token))
                .decode(PasskeysResponse.self)
            #expect(listed.credentials.map(\.id) == [bobs.id], "bob lists his own only")
        }
    }

    @Test func badOptionsRequestsAreRefused() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let token = tokens.accessToken.token
            let hints = try await Calls.post(
                app, API.Passkeys.registerOptions.path(), headers: .bearer(token),
                body: PasskeyRegistrationOptionsRequest(hints: ["usb-stick"]))
            #expect(hints.status == 422 && hints.errors?["hints"] != nil)
            // No passkey yet: nothing to step up or sign in with.
            let stepUp = try await Calls.post(app, API.Auth.stepUpPasskeyOptions.path(), headers: .bearer(token))
            #expect(stepUp.status == 422 && stepUp.errors?["method"] == "not enabled")
            // A registration challenge lives 120 seconds.
            let options = try await Calls.creationOptions(app, token: token)
            clock.advance(by: 121)
            let late = try await Calls.post(
                app, API.Passkeys.registerVerify.path(), headers: .bearer(token),
                body: PasskeyRegistrationRequest(credential: Passkey().registration(options)))
            #expect(late.status == 401 && late.code == "expired")
            #expect(try await Calls.state(app)[1] == 0)
        }
    }

    @Test(.tags(.database)) func aPasskeySecondStepCanRememberTheDevice() async throws {
        try await withTestApp { app in
            var passkey = Passkey()
            _ = try await Calls.signUpWithPasskey(app, passkey)
            let flow = try await Calls.passwordStep(app, address: "10.0.0.2")
            let options = try await Calls.flowOptions(app, flow: flow.otpFlowId)
            let answer = try await Calls.post(
                app, API.Passkeys.flowVerify.path(),
                body: PasskeyFlowVerifyRequest(
                    otpFlowId: flow.otpFlowId, credential: try passkey.assertion(options.challenge), trustDevice: true))
            #expect(answer.status == 200, "\(answer.text)")
            #expect(try answer.decode(SecondStepResponse.self).trustedDeviceToken != nil)
            #expect(try await AuditQueries.count(type: "trusted_device.added", on: app) == 1)
        }
    }

    /// On PostgreSQL a passkey second step is four round trips: the flow, the challenge and the
    /// passkey read, and one statement for every write (`PasskeySignInStore`), all or nothing.
    /// Runs in the PostgreSQL pass (`TWOFOLD_TEST_POSTGRES_URL`).
    @Test(.tags(.database)) func onPostgreSQLAPasskeySecondStepIsFourStatements() async throws {
        guard let url = ProcessInfo.processInfo.environment["TWOFOLD_TEST_POSTGRES_URL"], !url.isEmpty else { return }
        try await withTestApp { app in
            var passkey = Passkey()
            _ = try await Calls.signUpWithPasskey(app, passkey)
            let flow = try await Calls.passwordStep(app, address: "10.0.0.2")
            let options = try await Calls.flowOptions(app, flow: flow.otpFlowId)
            let assertion = try passkey.assertion(options.challenge)
            let sent = try #require(app.twofold.database.postgres).sent
            let before = sent.value
            let answer = try await Calls.post(
                app, API.Passkeys.flowVerify.path(),
                body: PasskeyFlowVerifyRequest(otpFlowId: flow.otpFlowId, credential: assertion))
            #expect(answer.status == 200, "\(answer.text)")
            #expect(sent.value - before == 4)
            #expect(try await AuditQueries.count(type: "login.succeeded", on: app) >= 1)
            // The same assertion again: its flow is used, and nothing more is written.
            let again = try await Calls.post(
                app, API.Passkeys.flowVerify.path(),
                body: PasskeyFlowVerifyRequest(otpFlowId: flow.otpFlowId, credential: assertion))
            #expect(again.status == 409 || again.status == 401, "\(again.text)")
        }
    }

    @Test func theSameCredentialCannotBeRegisteredTwice() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app)
            let bob = try await Accounts.signUp(app, "bob", address: "10.0.0.2")
            let passkey = Passkey()
            try await Calls.register(app, token: alice.accessToken.token, passkey)
            let options = try await Calls.creationOptions(app, token: bob.accessToken.token)
            let answer = try await Calls.post(
                app, API.Passkeys.registerVerify.path(), headers: .bearer(bob.accessToken.token),
                body: PasskeyRegistrationRequest(credential: passkey.registration(options)))
            #expect(answer.status == 409 && answer.code == "conflict")
        }
    }

    @Test func passwordlessOptionsShareTheSignInThrottleOfAnAddress() async throws {
        try await withTestApp { app in
            for _ in 0..<30 {
                #expect(
                    try await Calls.post(app, API.Passkeys.signInOptions.path(), headers: .client("10.5.0.1")).status
                        == 200)
            }
            let limited = try await Calls.post(app, API.Passkeys.signInOptions.path(), headers: .client("10.5.0.1"))
            #expect(limited.status == 429 && limited.code == "rate_limited")
            #expect(
                try await Calls.post(app, API.Passkeys.signInOptions.path(), headers: .client("10.5.0.2")).status == 200
            )
            #expect(try await AuditQueries.count(table: "webauthn_challenges", on: app) == 31)
        }
    }

    @Test func relatedOriginsAreTheConfiguredWebOrigins() async throws {
        try await withTestApp(adjust: {
            $0.webAuthn.origins = ["https://example.com", "https://example.co.uk", "android:apk-key-hash:abc"]
        }) { app in
            let answer = try await Calls.call(app, .GET, API.Operations.relatedOrigins.path())
            #expect(
                try answer.decode(RelatedOrigins.self).origins == ["https://example.com", "https://example.co.uk"])
        }
    }

    /// Apple's associated domains file names the configured apps for passkeys and for the
    /// recovery email's link; without an app it is not served (a developer's server vouches for none).
    @Test func theAppleAppSiteAssociationNamesTheConfiguredApps() async throws {
        let apps = ["ABCDE12345.dev.twofold.app", "ABCDE12345.dev.twofold.testing"]
        try await withTestApp(adjust: { $0.webAuthn.appleApps = apps }) { app in
            let association = try await app.client().send(API.Operations.appleAppSiteAssociation)
            #expect(association.webcredentials.apps == apps)
            let links = try #require(association.applinks.details.first)
            #expect(association.applinks.details.count == 1 && links.appIDs == apps)
            #expect(links.components.map(\.path) == ["/recovery/pass"] && links.components[0].query == ["token": "?*"])
            // The names Apple reads: "/" and "?" for a component's path and query.
            let text = try await Calls.call(app, .GET, API.Operations.appleAppSiteAssociation.path()).text
            #expect(text.contains(#""\/":"\/recovery\/pass""#) || text.contains(#""/":"/recovery/pass""#), "\(text)")
            #expect(text.contains(#""?":{"token":"?*"}"#), "\(text)")
        }
        let configured = try Configuration.load(
            from: ["TWOFOLD_APPLE_APP_IDS": apps.joined(separator: ", ")],
            workingDirectory: URL(fileURLWithPath: "/srv"))
        #expect(configured.webAuthn.appleApps == apps)
        try await withTestApp { app in
            let refused = try await refusal { try await app.client().send(API.Operations.appleAppSiteAssociation) }
            #expect(refused.status == 404 && refused.code == .notFound)
        }
    }

    @Test func providerNamesComeFromTheAAGUIDSnapshot() {
        #expect(PasskeyProviders.names.count >= 25)
        for name in ["iCloud Keychain", "Google Password Manager", "1Password", "YubiKey 5 Series", "Windows Hello"] {
            #expect(PasskeyProviders.names.values.contains(name), "\(name)")
        }
        #expect(PasskeyProviders.name(aaguid: "FBFC3007-154E-4ECC-8C0B-6E020557D7BD") == "iCloud Keychain")
        #expect(PasskeyProviders.name(aaguid: "00000000-0000-0000-0000-000000000000") == nil)
    }

    // MARK: Single use under concurrency

    @Test(.tags(.database)) func oneAssertionSentThirtyTimesInParallelSignsInOnce() async throws {
        try await withTestApp { app in
            var passkey = Passkey()
            let tokens = try await Calls.signUpWithPasskey(app, passkey)
            let options = try await Calls.signInOptions(app)
            let assertion = try passkey.assertion(options.challenge, userHandle: tokens.user.id)
            let sessionsBefore = try await Calls.state(app)[0]
            let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
                for index in 0..<30 {
                    group.addTask {
                        try await Calls.post(
                            app, API.Passkeys.signInVerify.path(), headers: .client("10.7.0.\(index)"),
                            body: PasskeySignInRequest(credential: assertion)
                        ).status
                    }
                }
                return try await group.reduce(into: [UInt]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
            #expect(statuses.filter { ![200, 409].contains($0) } == [], "\(statuses)")
            #expect(try await Calls.state(app)[0] == sessionsBefore + 1)
        }
    }

    @Test(.tags(.database)) func oneRegistrationSentTenTimesInParallelStoresOnePasskey() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            let options = try await Calls.creationOptions(app, token: tokens.accessToken.token)
            let credential = Passkey().registration(options)
            let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        try await Calls.post(
                            app, API.Passkeys.registerVerify.path(), headers: .bearer(tokens.accessToken.token),
                            body: PasskeyRegistrationRequest(credential: credential)
                        ).status
                    }
                }
                return try await group.reduce(into: [UInt]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
            // The rest: the challenge is used, or (once the passkey is stored) the account has a
            // second factor and this session must step up to add another.
            #expect(statuses.filter { ![200, 403, 409].contains($0) } == [], "\(statuses)")
            #expect(try await Calls.state(app)[1] == 1)
        }
    }
}

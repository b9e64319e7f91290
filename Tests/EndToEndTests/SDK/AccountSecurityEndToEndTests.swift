import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice
import TwofoldTestSupport

/// The SDK's factor settings against the built server: an authenticator app with its backup
/// codes shown once, passkeys added, listed, renamed and removed, and a step-up made when the
/// server asks for one.
@Suite struct AccountSecurityEndToEndTests {
    /// Steps up with a backup code, recording what the server said it needs.
    final class BackupCodeStepUp: StepUpProviding, @unchecked Sendable {
        // Safe: every member is read and written under `lock`.
        private let lock = NSLock()
        private var codes: [String] = []
        private var asked: [String?] = []

        var needs: [String?] { lock.withLock { asked } }
        func use(_ codes: [String]) { lock.withLock { self.codes = codes } }

        func stepUpProof(need: String?, methods: [FactorMethod]) async throws -> StepUpRequest {
            let code = lock.withLock {
                asked.append(need)
                return codes.removeFirst()
            }
            #expect(methods.contains(.totp))
            return StepUpRequest(method: .backup, code: code)
        }
    }

    @Test func anAuthenticatorPasskeysAndAStepUpThroughTheSDK() async throws {
        try await TestServers.withTarget { target in
            let client = target.client
            let token = try await target.register("ann", phone: nil)
            let session = SessionManager(client: client, store: MemoryTokenStore())
            await session.signedIn(
                try await client.send(
                    API.Auth.login, LoginRequest(username: "ann", password: TestAccounts.password)
                )
                .tokens)
            #expect(!token.isEmpty)
            let stepUp = BackupCodeStepUp()
            let maker = VirtualPasskeys(VirtualAuthenticator(origin: "http://localhost:\(target.server.port)"))
            let security = AccountSecurity(session: session, stepUp: stepUp, passkeys: maker)

            // The authenticator app: the secret pending, confirmed by its code, backup codes once.
            let setup = try await security.startAuthenticator()
            #expect(setup.otpauthURI.hasPrefix("otpauth://totp/") && setup.qrCodeSVG.contains("<svg"))
            let secret = try Base32.decode(setup.secret)
            let codes = try #require(
                try await security.confirmAuthenticator(code: try TOTP(secret: secret).code(at: Date())))
            #expect(codes.count == 10)
            #expect(try await security.status().totp.enabled)
            stepUp.use(codes)

            // A device remembered after a full sign-in; then the password alone on it: a session
            // that proved less than the account has.
            guard
                case .secondStep(let flow) = try await client.send(
                    API.Auth.login, LoginRequest(username: "ann", password: TestAccounts.password))
            else { throw CancellationError() }
            let full = try await client.send(
                API.SecondStep.verifyLogin,
                MFAVerifyLoginRequest(
                    code: try TOTP(secret: secret).code(at: Date().addingTimeInterval(30)), method: .totp,
                    otpFlowId: flow.otpFlowId, trustDevice: true))
            let remembered = try #require(full.trustedDeviceToken)
            await session.signedIn(
                try await client.send(
                    API.Auth.login, LoginRequest(username: "ann", password: TestAccounts.password),
                    headers: [Wire.Header.trustedDevice: remembered]
                ).tokens)

            // Adding a passkey from it: the server asks for a step-up, the SDK gives a backup code
            // and repeats the call, once.
            let added = try await security.addPasskey(name: "Virtual")
            #expect(added.credential.name == "Virtual")
            #expect(stepUp.needs.count == 1, "\(stepUp.needs)")
            let listed = try await security.passkeys()
            #expect(listed.map(\.id) == [added.credential.id])
            #expect(try await security.renamePasskey(added.credential.id, to: "Laptop").name == "Laptop")
            try await security.removePasskey(added.credential.id)
            #expect(try await security.passkeys().isEmpty)
            #expect(stepUp.needs.count == 1, "the step-up lasts: \(stepUp.needs)")

            // New backup codes replace the old ones.
            let fresh = try await security.regenerateBackupCodes()
            #expect(fresh.count == 10 && Set(fresh).isDisjoint(with: codes))
        }
    }
}

import Foundation
import TwofoldAPI
import TwofoldClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Screen models in a known state with no server behind them, for SwiftUI `#Preview`s and an
/// app's own snapshot or UI tests. Their SDK never reaches a network: every request fails at
/// once as a phone without signal does (`offline`), so a preview never calls a server.
@MainActor
public enum ScreenFixtures {
    /// A transport with no network: every request fails as `URLError.notConnectedToInternet`.
    public struct NoNetwork: Transport {
        /// The transport.
        public init() {}
        /// Fails at once, sending nothing.
        public func send(_ request: URLRequest) async throws -> HTTPAnswer {
            throw URLError(.notConnectedToInternet)
        }
    }

    /// A phone with a passcode and Face ID whose keys cannot be made or used: every key call
    /// fails as a cancelled prompt, so a preview never signs anything.
    public struct NoKeys: DeviceSecurity {
        /// The phone.
        public init() {}
        public func capabilities() async -> DeviceCapabilities { .faceID }
        public func createKey(tag: String, protection: KeyProtection) async throws(DeviceAuthFailure) -> Data {
            throw .userCancel
        }
        public func sign(_ message: Data, tag: String) async throws(DeviceAuthFailure) -> Data { throw .userCancel }
        public func hasKey(tag: String) async -> Bool { false }
        public func deleteKey(tag: String) async {}
        public func replaceKey(tag: String, with pending: String) async {}
        public func biometricKeyInvalidated(tag: String) async -> Bool { false }
    }

    /// Pat, the account the fixtures show.
    public static let user = UserDTO(
        id: UUID(uuidString: "3F2504E0-4F89-11D3-9A0C-0305E82C3301")!, username: "pat", email: "pat@example.com",
        phoneNumber: "+447700900123", role: "user", status: "active",
        createdAt: Date(timeIntervalSince1970: 1_800_000_000))

    /// A session for `user` that reaches no server.
    public static func session() -> SessionManager {
        SessionManager(
            client: APIClient(baseURL: URL(string: "https://mfa.example.com")!, transport: NoNetwork()),
            store: MemoryTokenStore())
    }

    /// The sign-in screen, empty.
    public static func signIn() -> SignInModel {
        let session = session()
        return SignInModel(flow: SignInFlow(client: session.client, session: session))
    }

    /// The account's security, on a session that reaches no server.
    public static func security() -> AccountSecurity { AccountSecurity(session: session()) }

    /// The 2FA settings hub, before it has read the account's factors.
    public static func securityHub() -> SecurityHubModel {
        let session = session()
        return SecurityHubModel(security: AccountSecurity(session: session), stepUp: StepUpPrompt(session: session))
    }

    /// Account recovery, at its start.
    public static func recovery() -> RecoveryModel {
        let session = session()
        return RecoveryModel(recovery: AccountRecovery(client: session.client), session: session)
    }

    /// Seed 004's enrolment of this phone for `user` (Face ID and a passcode: flow A).
    public static func enrollment() -> EnrollmentModel {
        EnrollmentModel(flows: deviceFlows(), device: NoKeys(), username: user.username)
    }

    /// Seed 004's sign-in with this phone's key.
    public static func deviceSignIn() -> DeviceSignInModel { DeviceSignInModel(flows: deviceFlows()) }

    /// Seed 004's settings of this phone.
    public static func deviceSettings() -> DeviceSettingsModel {
        let session = session()
        return DeviceSettingsModel(flows: deviceFlows(session), session: session, username: user.username)
    }

    private static func deviceFlows(_ session: SessionManager = session()) -> DeviceKeyFlows {
        DeviceKeyFlows(session: session, device: NoKeys(), deviceID: "preview-phone")
    }

    /// Ten backup codes just made, not yet saved.
    public static func backupCodes() -> BackupCodesModel {
        BackupCodesModel(
            security: AccountSecurity(session: session()),
            codes: [
                "k7m2-9xqp", "c4vd-h8rt", "w2nb-6fjs", "p9qa-3lzk", "t5ue-8ycm", "r3hx-7gwd", "m6kf-2bvn",
                "y8sj-4tpe", "d2wq-5nrh", "g7lc-9mxa",
            ])
    }

    /// The app signed in as `user`, its server out of reach.
    public static func appOffline() async -> AppModel {
        let session = session()
        await session.signedIn(
            AuthTokensResponse(
                accessToken: TokenDTO(token: "preview", expiresAt: Date().addingTimeInterval(900)),
                refreshToken: TokenDTO(token: "preview", expiresAt: Date().addingTimeInterval(86_400)), user: user))
        let app = AppModel(session: session)
        await app.launch()
        await app.checkConnection()
        return app
    }
}

#if canImport(SwiftUI) && os(iOS)
    import Foundation
    import TwofoldAPI
    import TwofoldApple
    import TwofoldClient
    import TwofoldScreens

    /// The app's objects, made once at launch, and the screen models made from them when a
    /// screen appears. Wiring only: what a screen does is its model's, and what the phone does is
    /// the adapters' (the Keychain, the Secure Enclave, LocalAuthentication, the passkey sheet).
    @MainActor
    public final class ScreenFactory {
        /// The auth guard and the app lock.
        public let app: AppModel
        /// "Confirm it's you", shared by every change the server guards.
        public let stepUp: StepUpPrompt
        /// Where device keys are kept ("Secure Enclave", "Keychain (simulator)"), for the dashboard.
        public let keyStorage: String?
        /// The signed-in session the screens call with.
        public let session: SessionManager
        /// This phone's key store (the Secure Enclave).
        public let device: any DeviceSecurity
        /// Tabs a build adds after the app's own (the testing build's dashboard); none in a
        /// release build, which links no test harness.
        public var moreTabs: [MoreTab] = []
        private let passkeys: (any PasskeyCreating & PasskeyAsserting)?
        /// Passkeys offered in the keyboard's autofill bar on the sign-in screen.
        let autofillPasskeys: (any PasskeyAsserting)?
        private let rememberedDevices: (any RememberedDeviceStore)?
        private let makeDeviceID: () -> String
        private let defaults: UserDefaults

        /// Where the app lock's choice is kept.
        public static let lockKey = "appLockEnabled"

        /// The app on `session`, with `device`'s keys (known to the server by `deviceID`, read when
        /// a device screen first needs it, after the Keychain is readable), `gate` as the app
        /// lock, `passkeys` for the passkey sheet, `autofillPasskeys` for the keyboard's autofill
        /// bar, and `rememberedDevices` for "remember this device".
        public init(
            session: SessionManager, device: any DeviceSecurity, deviceID: @escaping () -> String,
            gate: (any BiometricGate)?, passkeys: (any PasskeyCreating & PasskeyAsserting)?,
            autofillPasskeys: (any PasskeyAsserting)? = nil, rememberedDevices: (any RememberedDeviceStore)?,
            keyStorage: String?, defaults: UserDefaults = .standard
        ) {
            (self.session, self.device, makeDeviceID, self.passkeys) = (session, device, deviceID, passkeys)
            self.autofillPasskeys = autofillPasskeys
            (self.rememberedDevices, self.keyStorage, self.defaults) = (rememberedDevices, keyStorage, defaults)
            stepUp = StepUpPrompt(session: session)
            // Changes made offline wait in a file of the app's own (0600), across launches.
            let queueFile = URL.applicationSupportDirectory.appending(path: "Twofold/offline-changes.json")
            app = AppModel(
                session: session, gate: gate, lockEnabled: defaults.bool(forKey: Self.lockKey),
                queue: OfflineQueue(session: session, store: FileChangeQueueStore(file: queueFile)))
        }

        private lazy var deviceID = makeDeviceID()

        /// This phone's identifier, as the server knows it (read from the Keychain on first use).
        public func phoneID() -> String { deviceID }
        private lazy var security = AccountSecurity(session: session, stepUp: stepUp.provider, passkeys: passkeys)
        /// Seed 000's passkey nudge after a code sign-in, shown over the signed-in tabs.
        public lazy var passkeyNudge = PasskeyNudgeModel(
            security: security, store: DefaultsPasskeyNudgeStore(defaults: defaults))
        private lazy var deviceFlows = DeviceKeyFlows(
            session: session, device: device, deviceID: deviceID, stepUp: stepUp.provider)

        /// Turns the app lock on or off, and keeps the choice.
        public func setLock(_ enabled: Bool) {
            app.setLock(enabled)
            defaults.set(app.lockEnabled, forKey: Self.lockKey)
        }

        // MARK: Signed out

        /// Seed 003's login and seed 002's challenge; this iPhone's key is a second step for an
        /// account name typed that it keeps a key for.
        func signIn() -> SignInModel {
            SignInModel(
                flow: SignInFlow(
                    client: session.client, session: session, passkeys: passkeys, deviceKeys: deviceFlows,
                    rememberedDevices: rememberedDevices))
        }

        /// Seed 000's account recovery.
        func recovery() -> RecoveryModel {
            RecoveryModel(recovery: AccountRecovery(client: session.client), session: session)
        }

        /// Seed 004's sign-in with this phone's key, or SMS codes.
        func deviceSignIn() -> DeviceSignInModel { DeviceSignInModel(flows: deviceFlows) }

        // MARK: Signed in

        /// Seed 000's 2FA settings hub.
        func securityHub() -> SecurityHubModel {
            SecurityHubModel(security: security, stepUp: stepUp, support: Self.supportURL())
        }

        /// "Contact Support": the build's `TwofoldSupportURL` (`TWOFOLD_SUPPORT_URL` in
        /// App/project.yml), an `https:` page or a `mailto:` address; `nil` when it is not set.
        static func supportURL(bundle: Bundle = .main) -> URL? {
            guard let text = bundle.object(forInfoDictionaryKey: "TwofoldSupportURL") as? String,
                let url = URL(string: text.trimmingCharacters(in: .whitespaces)),
                ["https", "mailto"].contains(url.scheme?.lowercased() ?? "")
            else { return nil }
            return url
        }

        /// Seed 000's authenticator setup wizard.
        func authenticatorSetup() -> AuthenticatorSetupModel { AuthenticatorSetupModel(security: security) }

        /// Seed 000's backup codes: `codes` a setup just gave, or none (to make new ones).
        func backupCodes(_ codes: [String] = []) -> BackupCodesModel {
            BackupCodesModel(security: security, codes: codes)
        }

        /// SMS or email codes turned on.
        func codeChannel(_ channel: FactorMethod) -> CodeChannelSetupModel {
            CodeChannelSetupModel(security: security, channel: channel)
        }

        /// Seed 000's passkeys.
        func passkeyList() -> PasskeysModel { PasskeysModel(security: security) }

        /// Seed 002's remembered devices.
        func rememberedDevices() -> RememberedDevicesModel { RememberedDevicesModel(security: security) }

        /// Seed 004's enrolment of this phone for `user`.
        func enrollment(for user: UserDTO) -> EnrollmentModel {
            EnrollmentModel(flows: deviceFlows, device: device, username: user.username)
        }

        /// "Approve on your phone" for `user`'s sign-ins elsewhere, signed by this phone's key.
        func approvals(for user: UserDTO) -> ApprovalModel {
            let approvals = PhoneApprovals(session: session, signer: deviceFlows.signer(username: user.username))
            // Requests and notices reach this phone through Apple too, once it allows alerts.
            RemoteNotifications.shared.approvals(approvals)
            Task { await RemoteNotifications.shared.register() }
            return ApprovalModel(approvals: approvals)
        }

        /// Seed 001's PIN pad running `kind` on this phone for `user` (the biometric key kept
        /// apart from the sign-in key, under its own tag).
        func pinPad(_ kind: DeviceSecondFactorFlow.Kind, for user: UserDTO) -> PINPadModel {
            PINPadModel(
                flow: DeviceSecondFactorFlow(
                    kind, session: session, device: device, deviceID: deviceID,
                    biometricKeyTag: "dev.twofold.second-factor.\(user.id.uuidString)"))
        }

        /// Seed 004's settings of this phone for `user`.
        func deviceSettings(for user: UserDTO) -> DeviceSettingsModel {
            DeviceSettingsModel(flows: deviceFlows, session: session, username: user.username)
        }
    }
#endif

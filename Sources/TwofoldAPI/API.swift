import Foundation

/// Every endpoint of the server, defined once (API.md). The server registers a handler for each
/// and for nothing else (a test checks both ways); tests and clients build requests from them.
public enum API {
    /// The prefix of every API path (API.md: "Base path `/api/v1`").
    public static let base = "api/v1"

    /// Operations: health, readiness, metrics, the OpenAPI document, the token keys.
    public enum Operations {
        public static let health = Endpoint<NoContent, HealthStatus>(.get, "healthz", .anyone)
        public static let ready = Endpoint<NoContent, HealthStatus>(.get, "readyz", .anyone)
        public static let metrics = Endpoint<NoContent, PlainText>(.get, "metrics", .anyone)
        public static let openAPI = Endpoint<NoContent, PlainText>(.get, "openapi.yaml", .anyone)
        public static let jwks = Endpoint<NoContent, JSONWebKeySet>(.get, ".well-known/jwks.json", .anyone)
        /// The origins that may use this server's passkeys (WebAuthn related origin requests).
        public static let relatedOrigins = Endpoint<NoContent, RelatedOrigins>(.get, ".well-known/webauthn", .anyone)
        /// The iOS apps this server vouches for: their passkeys and the links they open (Apple's
        /// associated domains); 404 when none is configured.
        public static let appleAppSiteAssociation = Endpoint<NoContent, AppleAppSiteAssociation>(
            .get, ".well-known/apple-app-site-association", .anyone)
    }

    /// Accounts and sessions (seed 003).
    public enum Auth {
        public static let register = Endpoint<RegisterRequest, RegisterResponse>(
            .post, "api/v1/auth/register", .anyone, success: [201])
        public static let login = Endpoint<LoginRequest, LoginOutcome>(.post, "api/v1/auth/login", .anyone)
        public static let refresh = Endpoint<RefreshRequest, RefreshResponse>(.post, "api/v1/auth/refresh", .anyone)
        public static let logout = Endpoint<RefreshRequest, SuccessResponse>(.post, "api/v1/auth/logout", .anyone)
        public static let logoutAll = Endpoint<NoContent, SuccessResponse>(.post, "api/v1/auth/logout-all", .signedIn)
        public static let sessions = Endpoint<NoContent, SessionsResponse>(.get, "api/v1/auth/sessions", .signedIn)
        public static let revokeSession = ResourceEndpoint<NoContent, SuccessResponse>(
            .delete, "api/v1/auth/sessions/{sessionID}", .signedIn)
        public static let stepUp = Endpoint<StepUpRequest, StepUpResponse>(.post, "api/v1/auth/step-up", .signedIn)
        public static let stepUpSend = Endpoint<StepUpSendRequest, CodeSentResponse>(
            .post, "api/v1/auth/step-up/send", .signedIn)
        public static let stepUpDeviceKeyChallenge = Endpoint<StepUpDeviceKeyChallengeRequest, DeviceChallengeResponse>(
            .post, "api/v1/auth/step-up/device-key/challenge", .signedIn)
        /// Options for a passkey assertion that `POST /auth/step-up` (`method: webauthn`) takes.
        public static let stepUpPasskeyOptions = Endpoint<NoContent, PasskeyRequestOptions>(
            .post, "api/v1/auth/step-up/passkey/options", .signedIn)

        /// Changes that never honour `Idempotency-Key`: a refresh token is spent once, and a
        /// spent one sent again is reuse (its session ends), never a replayed answer that would
        /// hand out the live new pair (`docs/tokens.md`).
        public static let neverReplayed: Set<AnyEndpoint> = [refresh.erased]
    }

    /// The signed-in endpoints the server's own pages' script calls, with the browser's session
    /// cookie and `X-CSRF-Token` in place of a bearer token: no other endpoint takes the cookie,
    /// so a script that got into a page could not reach the rest of the API (administration,
    /// device enrolment) nor step up for a bearer token of its own.
    public static let pageScript: Set<AnyEndpoint> = [
        Auth.stepUpPasskeyOptions.erased, Passkeys.registerOptions.erased, Passkeys.registerVerify.erased,
        Push.stepUpStatus.erased,
    ]

    /// Passkeys (seed 000): the second step of a login flow, and passwordless sign-in.
    public enum Passkeys {
        public static let flowOptions = Endpoint<PasskeyFlowOptionsRequest, PasskeyRequestOptions>(
            .post, "api/v1/2fa/passkey/authenticate/options", .anyone)
        public static let flowVerify = Endpoint<PasskeyFlowVerifyRequest, SecondStepResponse>(
            .post, "api/v1/2fa/passkey/authenticate/verify", .anyone)
        /// Passwordless: an empty body; the browser offers the passkeys it holds (conditional UI).
        public static let signInOptions = Endpoint<NoContent, PasskeyRequestOptions>(
            .post, "api/v1/passkey/authenticate/options", .anyone)
        public static let signInVerify = Endpoint<PasskeySignInRequest, AuthTokensResponse>(
            .post, "api/v1/passkey/authenticate/verify", .anyone)
        public static let registerOptions = Endpoint<PasskeyRegistrationOptionsRequest, PasskeyCreationOptions>(
            .post, "api/v1/2fa/webauthn/register/options", .signedIn)
        public static let registerVerify = Endpoint<PasskeyRegistrationRequest, PasskeyRegisteredResponse>(
            .post, "api/v1/2fa/webauthn/register/verify", .signedIn)
        public static let list = Endpoint<NoContent, PasskeysResponse>(
            .get, "api/v1/2fa/passkey/credentials", .signedIn)
        public static let rename = ResourceEndpoint<PasskeyRenameRequest, PasskeyDTO>(
            .patch, "api/v1/2fa/passkey/credentials/{credentialID}", .signedIn)
        /// Needs a step-up.
        public static let delete = ResourceEndpoint<NoContent, SuccessResponse>(
            .delete, "api/v1/2fa/passkey/credentials/{credentialID}", .signedIn)
    }

    /// The second step of a sign-in, on the flow `POST /auth/login` started.
    public enum SecondStep {
        public static let validateTOTP = Endpoint<TOTPValidateRequest, SecondStepResponse>(
            .post, "api/v1/2fa/totp/validate", .anyone)
        public static let verifyBackupCode = Endpoint<BackupCodeVerifyRequest, SecondStepResponse>(
            .post, "api/v1/auth/backup-codes/verify", .anyone)
        /// The same as `verifyBackupCode`, under seed 000's path.
        public static let verifyBackupCodeSeed000 = Endpoint<BackupCodeVerifyRequest, SecondStepResponse>(
            .post, "api/v1/2fa/backup-codes/verify", .anyone)
        public static let verifyLogin = Endpoint<MFAVerifyLoginRequest, SecondStepResponse>(
            .post, "api/v1/auth/mfa/verify-login", .anyone)
        public static let verifyOTP = Endpoint<OTPVerifyRequest, SecondStepResponse>(
            .post, "api/v1/auth/otp/verify", .anyone)
        public static let resendOTP = Endpoint<OTPResendRequest, CodeSentResponse>(
            .post, "api/v1/auth/otp/resend", .anyone)
        public static let deviceKeyChallenge = Endpoint<DeviceKeyChallengeRequest, DeviceChallengeResponse>(
            .post, "api/v1/auth/mfa/device-key/challenge", .anyone)
    }

    /// Managing second factors (seed 000).
    public enum TwoFactor {
        public static let totpSetup = Endpoint<NoContent, TOTPSetupResponse>(.post, "api/v1/2fa/totp/setup", .signedIn)
        public static let totpVerify = Endpoint<CodeRequest, FactorEnabledResponse>(
            .post, "api/v1/2fa/totp/verify", .signedIn)
        public static let totpDelete = Endpoint<NoContent, SuccessResponse>(.delete, "api/v1/2fa/totp", .signedIn)
        public static let backupCodesRegenerate = Endpoint<NoContent, BackupCodesResponse>(
            .post, "api/v1/2fa/backup-codes/regenerate", .signedIn)
        public static let status = Endpoint<NoContent, TwoFactorStatus>(.get, "api/v1/2fa/status", .signedIn)
        public static let smsSetup = Endpoint<SMSSetupRequest, CodeSentResponse>(
            .post, "api/v1/2fa/sms/setup", .signedIn)
        public static let smsVerify = Endpoint<CodeRequest, FactorEnabledResponse>(
            .post, "api/v1/2fa/sms/verify", .signedIn)
        public static let smsDelete = Endpoint<NoContent, SuccessResponse>(.delete, "api/v1/2fa/sms", .signedIn)
        public static let emailSetup = Endpoint<NoContent, CodeSentResponse>(.post, "api/v1/2fa/email/setup", .signedIn)
        public static let emailVerify = Endpoint<CodeRequest, FactorEnabledResponse>(
            .post, "api/v1/2fa/email/verify", .signedIn)
        public static let emailDelete = Endpoint<NoContent, SuccessResponse>(.delete, "api/v1/2fa/email", .signedIn)
        public static let primaryMethod = Endpoint<PrimaryMethodRequest, SuccessResponse>(
            .put, "api/v1/2fa/primary-method", .signedIn)
        /// Seed 003's flat status.
        public static let mfaStatus = Endpoint<NoContent, MFAStatus>(.get, "api/v1/auth/mfa/status", .signedIn)
        public static let trustedDevices = Endpoint<NoContent, TrustedDevicesResponse>(
            .get, "api/v1/auth/mfa/trusted-devices", .signedIn)
        public static let revokeTrustedDevice = ResourceEndpoint<NoContent, SuccessResponse>(
            .delete, "api/v1/auth/mfa/trusted-devices/{deviceID}", .signedIn)
    }

    /// The signed-in user's own account.
    public enum Account {
        public static let show = Endpoint<NoContent, UserDTO>(.get, "api/v1/account", .signedIn)
        public static let changePassword = Endpoint<PasswordChangeRequest, SuccessResponse>(
            .put, "api/v1/account/password", .signedIn)
        public static let changePhone = Endpoint<PhoneChangeRequest, DestinationChangeOutcome>(
            .put, "api/v1/account/phone", .signedIn, success: [200, 202])
        public static let changeEmail = Endpoint<EmailChangeRequest, DestinationChangeOutcome>(
            .put, "api/v1/account/email", .signedIn, success: [200, 202])
        /// Whether the address on file is verified.
        public static let emailStatus = Endpoint<NoContent, EmailVerificationStatus>(
            .get, "api/v1/account/email/verification", .signedIn)
        /// Another verification link to the address on file (`202`).
        public static let sendEmailVerification = Endpoint<NoContent, EmailVerificationStatus>(
            .post, "api/v1/account/email/verification", .signedIn, success: [202])
        /// The link's token, from a session of the account it was sent for: the address it went
        /// to becomes verified (whoever reads a mistyped address cannot confirm it).
        public static let verifyEmail = Endpoint<EmailVerifyRequest, EmailVerificationStatus>(
            .post, "api/v1/account/email/verify", .signedIn)
    }

    /// A forgotten password (NIST SP 800-63B rev 4 §4.2, OWASP's Forgot Password cheat sheet): a
    /// single-use link to the verified address, then the new password with one of the account's
    /// second factors when it has any.
    public enum PasswordReset {
        public static let forgot = Endpoint<PasswordForgotRequest, PasswordForgotResponse>(
            .post, "api/v1/auth/password/forgot", .anyone, success: [202])
        public static let options = Endpoint<PasswordResetOptionsRequest, PasswordResetOptions>(
            .post, "api/v1/auth/password/reset/options", .anyone)
        public static let sendCode = Endpoint<PasswordResetSendRequest, CodeSentResponse>(
            .post, "api/v1/auth/password/reset/send", .anyone)
        public static let deviceKeyChallenge = Endpoint<PasswordResetChallengeRequest, DeviceChallengeResponse>(
            .post, "api/v1/auth/password/reset/device-key/challenge", .anyone)
        public static let passkeyOptions = Endpoint<PasswordResetOptionsRequest, PasskeyRequestOptions>(
            .post, "api/v1/auth/password/reset/passkey/options", .anyone)
        public static let reset = Endpoint<PasswordResetRequest, SuccessResponse>(
            .post, "api/v1/auth/password/reset", .anyone)
    }

    /// Seed 004's device-bound keys (`/mfa/…`, `/auth/…`, `/devices/…`, `/device/…`).
    public enum DeviceKeys {
        public static let enroll = Endpoint<DeviceEnrollRequest, DeviceEnrollResponse>(
            .post, "api/v1/mfa/enroll", .signedIn)
        public static let unenroll = Endpoint<DeviceRequest, DeviceMessageResponse>(
            .post, "api/v1/mfa/unenroll", .signedIn)
        public static let upgrade = Endpoint<DeviceUpgradeRequest, DeviceMethodResponse>(
            .post, "api/v1/mfa/upgrade", .signedIn)
        public static let downgrade = Endpoint<DeviceRequest, DeviceMethodResponse>(
            .post, "api/v1/mfa/downgrade", .signedIn)
        public static let devices = ResourceEndpoint<NoContent, DeviceListResponse>(
            .get, "api/v1/devices/{username}", .signedIn)
        public static let status = ResourceEndpoint<NoContent, DeviceStatusResponse>(
            .get, "api/v1/device/{deviceID}/status", .signedIn)
        public static let initiate = Endpoint<DeviceRequest, DeviceChallengeResponse>(
            .post, "api/v1/auth/initiate", .anyone)
        public static let verifySignature = Endpoint<VerifySignatureRequest, DeviceTokenResponse>(
            .post, "api/v1/auth/verify-signature", .anyone)
        public static let requestOTP = Endpoint<RequestOTPRequest, RequestOTPResponse>(
            .post, "api/v1/auth/request-otp", .anyone)
        public static let verifyOTP = Endpoint<DeviceVerifyOTPRequest, DeviceTokenResponse>(
            .post, "api/v1/auth/verify-otp", .anyone)
    }

    /// "Approve on your phone" (issue Z): the signing-in side asks and waits with its login flow;
    /// the phone, signed in, lists the request and answers it signed with its device key.
    public enum Push {
        public static let start = Endpoint<PushStartRequest, PushStartResponse>(
            .post, "api/v1/auth/mfa/push", .anyone)
        public static let status = Endpoint<PushStatusRequest, PushStatusResponse>(
            .post, "api/v1/auth/mfa/push/status", .anyone)
        public static let complete = Endpoint<PushCompleteRequest, SecondStepResponse>(
            .post, "api/v1/auth/mfa/push/complete", .anyone)
        public static let pending = ResourceEndpoint<NoContent, PushApprovalsResponse>(
            .get, "api/v1/device/{deviceID}/approvals", .signedIn)
        public static let decide = ResourceEndpoint<PushDecisionRequest, PushDecisionResponse>(
            .post, "api/v1/device/{deviceID}/approvals", .signedIn)
        /// A step-up approved on the phone: ask, then wait; `POST /auth/step-up` with `method: push`
        /// and the request's ID completes it.
        public static let stepUpStart = Endpoint<NoContent, PushStartResponse>(
            .post, "api/v1/auth/step-up/push", .signedIn)
        public static let stepUpStatus = Endpoint<PushStepUpStatusRequest, PushStatusResponse>(
            .post, "api/v1/auth/step-up/push/status", .signedIn)
        /// Where Apple's push service reaches the phone; `forgetPushToken` stops it.
        public static let setPushToken = ResourceEndpoint<PushTokenRequest, SuccessResponse>(
            .put, "api/v1/device/{deviceID}/push-token", .signedIn)
        public static let forgetPushToken = ResourceEndpoint<NoContent, SuccessResponse>(
            .delete, "api/v1/device/{deviceID}/push-token", .signedIn)
    }

    /// Seed 001's PIN and biometrics on an enrolled device.
    public enum DeviceFactors {
        public static let status = ResourceEndpoint<NoContent, DeviceSecondFactorResponse>(
            .get, "api/v1/device/{deviceID}/second-factor", .signedIn)
        public static let setPIN = ResourceEndpoint<DevicePINChangeRequest, DeviceSecondFactorResponse>(
            .put, "api/v1/device/{deviceID}/pin", .signedIn)
        public static let verifyPIN = ResourceEndpoint<DevicePINRequest, DeviceFactorVerifiedResponse>(
            .post, "api/v1/device/{deviceID}/pin/verify", .signedIn)
        public static let addBiometrics = ResourceEndpoint<DeviceBiometricsAddRequest, DeviceSecondFactorResponse>(
            .put, "api/v1/device/{deviceID}/biometrics", .signedIn)
        public static let biometricChallenge = ResourceEndpoint<NoContent, BiometricChallengeResponse>(
            .post, "api/v1/device/{deviceID}/biometrics/challenge", .signedIn)
        public static let verifyBiometrics = ResourceEndpoint<BiometricSignature, DeviceFactorVerifiedResponse>(
            .post, "api/v1/device/{deviceID}/biometrics/verify", .signedIn)
        public static let removeBiometrics = ResourceEndpoint<DeviceFactorProof, DeviceSecondFactorResponse>(
            .post, "api/v1/device/{deviceID}/biometrics/remove", .signedIn)
        public static let biometricsInvalidated = ResourceEndpoint<NoContent, DeviceSecondFactorResponse>(
            .post, "api/v1/device/{deviceID}/biometrics/invalidated", .signedIn)
    }

    /// Administration.
    public enum Admin {
        public static let users = Endpoint<NoContent, AdminUsersResponse>(.get, "api/v1/admin/users", .admin)
        public static let user = ResourceEndpoint<NoContent, AdminUserDetail>(
            .get, "api/v1/admin/users/{userID}", .admin)
        public static let unlock = ResourceEndpoint<NoContent, UserDTO>(
            .post, "api/v1/admin/users/{userID}/unlock", .admin)
        public static let audit = Endpoint<NoContent, AuditEventsResponse>(.get, "api/v1/admin/audit", .admin)
        /// Removes every second factor of the user (the admin steps up first).
        public static let resetMFA = ResourceEndpoint<NoContent, UserDTO>(
            .post, "api/v1/admin/users/{userID}/reset-mfa", .admin)
        /// Recovery requests whose email was proven, waiting for review first.
        public static let recoveryRequests = Endpoint<NoContent, AdminRecoveryResponse>(
            .get, "api/v1/admin/recovery", .admin)
        /// The document attached to a recovery request, while it is kept.
        public static let recoveryDocument = ResourceEndpoint<NoContent, FileContents>(
            .get, "api/v1/admin/recovery/{recoveryID}/document", .admin)
        public static let approveRecovery = ResourceEndpoint<RecoveryDecisionRequest, AdminRecoveryRequest>(
            .post, "api/v1/admin/recovery/{recoveryID}/approve", .admin)
        public static let denyRecovery = ResourceEndpoint<RecoveryDecisionRequest, AdminRecoveryRequest>(
            .post, "api/v1/admin/recovery/{recoveryID}/deny", .admin)
    }

    /// Account recovery when every factor is lost (seed 000; NIST SP 800-63B rev 4 §4.2): a code
    /// to the account's email address, review by an administrator, then a single-use pass sent
    /// to that address.
    public enum Recovery {
        public static let start = Endpoint<RecoveryStartRequest, RecoveryStatus>(
            .post, "api/v1/2fa/recovery", .anyone, success: [202])
        public static let status = ResourceEndpoint<NoContent, RecoveryStatus>(
            .get, "api/v1/2fa/recovery/{recoveryID}", .anyone)
        /// The code sent to the account's email address: the request then waits for review.
        public static let verifyEmail = ResourceEndpoint<CodeRequest, RecoveryStatus>(
            .post, "api/v1/2fa/recovery/{recoveryID}/verify", .anyone)
        /// "This wasn't me": the token of the link in every recovery notice.
        public static let cancel = Endpoint<RecoveryCancelRequest, RecoveryStatus>(
            .post, "api/v1/2fa/recovery-cancel", .anyone)
        /// The approved pass: signs in once; the session sets up a factor before anything else.
        public static let redeem = Endpoint<RecoveryRedeemRequest, AuthTokensResponse>(
            .post, "api/v1/2fa/recovery-pass", .anyone)

        /// What a session a recovery pass began may call while the account has no second factor:
        /// read its state, set up a factor, sign out. Everything else is refused with
        /// `factor_setup_required`.
        public static let beforeFactorSetup: Set<AnyEndpoint> = [
            TwoFactor.status.erased, TwoFactor.mfaStatus.erased, TwoFactor.totpSetup.erased,
            TwoFactor.totpVerify.erased, TwoFactor.smsSetup.erased, TwoFactor.smsVerify.erased,
            TwoFactor.emailSetup.erased, TwoFactor.emailVerify.erased, Passkeys.registerOptions.erased,
            Passkeys.registerVerify.erased, DeviceKeys.enroll.erased, Account.show.erased, Auth.sessions.erased,
            Auth.revokeSession.erased, Auth.logoutAll.erased,
        ]
    }

    /// Every endpoint above.
    public static let all: [AnyEndpoint] = [
        Operations.health.erased, Operations.ready.erased, Operations.metrics.erased, Operations.openAPI.erased,
        Operations.jwks.erased, Operations.relatedOrigins.erased, Operations.appleAppSiteAssociation.erased,
        Auth.register.erased, Auth.login.erased, Auth.refresh.erased, Auth.logout.erased, Auth.logoutAll.erased,
        Auth.sessions.erased, Auth.revokeSession.erased, Auth.stepUp.erased, Auth.stepUpSend.erased,
        Auth.stepUpDeviceKeyChallenge.erased, Auth.stepUpPasskeyOptions.erased,
        Passkeys.flowOptions.erased, Passkeys.flowVerify.erased, Passkeys.signInOptions.erased,
        Passkeys.signInVerify.erased, Passkeys.registerOptions.erased, Passkeys.registerVerify.erased,
        Passkeys.list.erased, Passkeys.rename.erased, Passkeys.delete.erased,
        SecondStep.validateTOTP.erased, SecondStep.verifyBackupCode.erased, SecondStep.verifyBackupCodeSeed000.erased,
        SecondStep.verifyLogin.erased, SecondStep.verifyOTP.erased, SecondStep.resendOTP.erased,
        SecondStep.deviceKeyChallenge.erased,
        TwoFactor.totpSetup.erased, TwoFactor.totpVerify.erased, TwoFactor.totpDelete.erased,
        TwoFactor.backupCodesRegenerate.erased, TwoFactor.status.erased, TwoFactor.smsSetup.erased,
        TwoFactor.smsVerify.erased, TwoFactor.smsDelete.erased, TwoFactor.emailSetup.erased,
        TwoFactor.emailVerify.erased, TwoFactor.emailDelete.erased, TwoFactor.primaryMethod.erased,
        TwoFactor.mfaStatus.erased, TwoFactor.trustedDevices.erased, TwoFactor.revokeTrustedDevice.erased,
        Account.show.erased, Account.changePassword.erased, Account.changePhone.erased, Account.changeEmail.erased,
        Account.emailStatus.erased, Account.sendEmailVerification.erased, Account.verifyEmail.erased,
        PasswordReset.forgot.erased, PasswordReset.options.erased, PasswordReset.sendCode.erased,
        PasswordReset.deviceKeyChallenge.erased, PasswordReset.passkeyOptions.erased, PasswordReset.reset.erased,
        DeviceKeys.enroll.erased, DeviceKeys.unenroll.erased, DeviceKeys.upgrade.erased, DeviceKeys.downgrade.erased,
        DeviceKeys.devices.erased, DeviceKeys.status.erased, DeviceKeys.initiate.erased,
        DeviceKeys.verifySignature.erased, DeviceKeys.requestOTP.erased, DeviceKeys.verifyOTP.erased,
        DeviceFactors.status.erased, DeviceFactors.setPIN.erased, DeviceFactors.verifyPIN.erased,
        DeviceFactors.addBiometrics.erased, DeviceFactors.biometricChallenge.erased,
        DeviceFactors.verifyBiometrics.erased, DeviceFactors.removeBiometrics.erased,
        DeviceFactors.biometricsInvalidated.erased,
        Push.start.erased, Push.status.erased, Push.complete.erased, Push.pending.erased, Push.decide.erased,
        Push.setPushToken.erased, Push.forgetPushToken.erased, Push.stepUpStart.erased, Push.stepUpStatus.erased,
        Admin.users.erased, Admin.user.erased, Admin.unlock.erased, Admin.audit.erased, Admin.resetMFA.erased,
        Admin.recoveryRequests.erased, Admin.recoveryDocument.erased, Admin.approveRecovery.erased,
        Admin.denyRecovery.erased,
        Recovery.start.erased, Recovery.status.erased, Recovery.verifyEmail.erased, Recovery.cancel.erased,
        Recovery.redeem.erased,
    ]
}

/// An answer that is a file, not JSON (a recovery request's document): its bytes and type.
public struct FileContents: Sendable, Equatable {
    public var data: Data
    public var contentType: String
    public init(data: Data, contentType: String) {
        self.data = data
        self.contentType = contentType
    }
}

/// An answer that is text, not JSON (`/metrics`, `/openapi.yaml`).
public struct PlainText: Sendable, Equatable {
    public var text: String
    public init(_ text: String) { self.text = text }
}

/// The answer of `POST /auth/login`: signed in, or a second step to take.
public enum LoginOutcome: Codable, Sendable {
    case signedIn(AuthTokensResponse)
    case secondStep(LoginChallengeResponse)

    private enum Keys: String, CodingKey { case requires2FA }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        if try container.decodeIfPresent(Bool.self, forKey: .requires2FA) == true {
            self = .secondStep(try LoginChallengeResponse(from: decoder))
        } else {
            self = .signedIn(try AuthTokensResponse(from: decoder))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .signedIn(let tokens): try tokens.encode(to: encoder)
        case .secondStep(let challenge): try challenge.encode(to: encoder)
        }
    }
}

/// The answer of `PUT /account/phone` and `PUT /account/email`: without a code, a code sent to
/// the new destination (`202`); with the code, the account as changed (`200`).
public enum DestinationChangeOutcome: Codable, Sendable {
    case codeSent(CodeSentResponse)
    case changed(UserDTO)

    private enum Keys: String, CodingKey { case id }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self =
            container.contains(.id)
            ? .changed(try UserDTO(from: decoder)) : .codeSent(try CodeSentResponse(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .codeSent(let sent): try sent.encode(to: encoder)
        case .changed(let user): try user.encode(to: encoder)
        }
    }
}

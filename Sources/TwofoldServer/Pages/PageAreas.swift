import Foundation
import TwofoldAPI
import Vapor

/// Signing in: the password, the second step, a passkey with no password, and registration.
struct SignInPages: PageArea {
    let kit: PageKit
    let signIn: SignIn
    let registration: Registration
    let secondStep: SecondStep
    let passwordless: PasswordlessSignIn
    let push: PushApprovals
    let trustedDeviceLifetime: TimeInterval
    /// How long after a code is sent another may be (`TWOFOLD_CODE_RESEND_SECONDS`).
    let codeResendAfter: TimeInterval
}

/// "Confirm it's you" (a step-up) and the change it completes, and signing out.
struct StepUpPages: PageArea {
    let kit: PageKit
    let stepUp: StepUp
    let factorSettings: FactorSettings
}

/// The account's security page and every change made from it, and confirming the address.
struct SecurityPages: PageArea {
    let kit: PageKit
    let stepUps: StepUpPages
    let factorSettings: FactorSettings
    let passkeyManagement: PasskeyManagement
    let accountChanges: AccountChanges
    let signOut: SignOut
    let sessions: SessionService
    let deviceKeys: DeviceKeyService
    let deviceEnrolment: DeviceEnrolment
    let emailVerification: EmailVerification
    let callers: Callers
}

/// A forgotten password: the link by email, then the new password with a second factor.
struct PasswordPages: PageArea {
    let kit: PageKit
    let passwordReset: PasswordReset
}

/// Account recovery for a person who lost every sign-in method.
struct RecoveryPages: PageArea {
    let kit: PageKit
    let recovery: AccountRecovery
}

/// The administrators' console: users, the recovery queue, the audit log.
struct AdminPages: PageArea {
    let kit: PageKit
    let stepUps: StepUpPages
    let administration: Administration
    let recovery: AccountRecovery
    let factorSettings: FactorSettings
    let deviceKeys: DeviceKeyService
}

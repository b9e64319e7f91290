import Foundation
import TwofoldAPI
import Vapor

/// The pages (`Pages`): rendered on the same services as the JSON API, so no sign-in,
/// second-step, factor, recovery or administration rule is written twice. Each handler reads
/// its form, asks `BrowserSessions` whether the form and the visitor may, calls a service,
/// and renders its answer or its refusal in words.
///
/// This type only wires: it builds each area of the pages (`SignInPages`, `StepUpPages`,
/// `SecurityPages`, `PasswordPages`, `RecoveryPages`, `AdminPages`) with the services that area
/// uses, and registers their handlers.
struct PagesController: Sendable {
    let browser: BrowserSessions
    let signIn: SignIn
    let registration: Registration
    let secondStep: SecondStep
    let push: PushApprovals
    let factorSettings: FactorSettings
    let accountChanges: AccountChanges
    let signOut: SignOut
    let sessions: SessionService
    let stepUp: StepUp
    let recovery: AccountRecovery
    let passwordReset: PasswordReset
    let emailVerification: EmailVerification
    let administration: Administration
    let callers: Callers
    let passkeys: PasskeyService
    let passkeyManagement: PasskeyManagement
    let passwordless: PasswordlessSignIn
    let deviceKeys: DeviceKeyService
    let deviceEnrolment: DeviceEnrolment
    let cookies: CookieRules
    let trustedDeviceLifetime: TimeInterval
    /// How long after a code is sent another may be (`TWOFOLD_CODE_RESEND_SECONDS`).
    let codeResendAfter: TimeInterval
    let clock: ServerClock
    let registrationEnabled: Bool

    func boot(_ routes: any RoutesBuilder) {
        let kit = PageKit(browser: browser, cookies: cookies, clock: clock, registrationEnabled: registrationEnabled)
        let signIns = SignInPages(
            kit: kit, signIn: signIn, registration: registration, secondStep: secondStep, passwordless: passwordless,
            push: push, trustedDeviceLifetime: trustedDeviceLifetime, codeResendAfter: codeResendAfter)
        let stepUps = StepUpPages(kit: kit, stepUp: stepUp, factorSettings: factorSettings)
        let security = SecurityPages(
            kit: kit, stepUps: stepUps, factorSettings: factorSettings, passkeyManagement: passkeyManagement,
            accountChanges: accountChanges, signOut: signOut, sessions: sessions, deviceKeys: deviceKeys,
            deviceEnrolment: deviceEnrolment, emailVerification: emailVerification, callers: callers)
        let passwords = PasswordPages(kit: kit, passwordReset: passwordReset)
        let recoveries = RecoveryPages(kit: kit, recovery: recovery)
        let admin = AdminPages(
            kit: kit, stepUps: stepUps, administration: administration, recovery: recovery,
            factorSettings: factorSettings, deviceKeys: deviceKeys)
        on(routes, Pages.stylesheet) { _ in Self.asset(PageAssets.stylesheet, type: "text/css; charset=utf-8") }
        on(routes, Pages.script) { _ in Self.asset(PageAssets.script, type: "text/javascript; charset=utf-8") }
        on(routes, Pages.signIn, use: signIns.signInPage)
        on(routes, Pages.signIn.form, use: signIns.signInSubmit)
        on(routes, Pages.secondStep, use: signIns.secondStepSubmit)
        on(routes, Pages.resendCode, use: signIns.resendCode)
        on(routes, Pages.pushStart, use: signIns.pushStart)
        on(routes, Pages.pushComplete, use: signIns.pushComplete)
        on(routes, Pages.register, use: signIns.registerPage)
        on(routes, Pages.register.form, use: signIns.registerSubmit)
        on(routes, Pages.passkeySignIn, use: signIns.passkeySignIn)
        on(routes, Pages.signOut, use: stepUps.signOutSubmit)
        on(routes, Pages.stepUpPrompt, use: stepUps.stepUpShow)
        on(routes, Pages.stepUp, use: stepUps.stepUpSubmit)
        on(routes, Pages.stepUpPhone, use: stepUps.stepUpPhone)
        on(routes, Pages.accountSecurity, use: security.securityPage)
        on(routes, Pages.totpSetup, use: security.totpSetup)
        on(routes, Pages.totpConfirm, use: security.totpConfirm)
        on(routes, Pages.forgetDevice, use: security.forgetDevice)
        on(routes, Pages.totpRemove, use: security.totpRemove)
        on(routes, Pages.backupCodesRegenerate, use: security.backupCodesRegenerate)
        on(routes, Pages.passkeyRename, use: security.passkeyRename)
        on(routes, Pages.passkeyDelete, use: security.passkeyDelete)
        on(routes, Pages.codesSetup, use: security.codesSetup)
        on(routes, Pages.codesConfirm, use: security.codesConfirm)
        on(routes, Pages.codesDisable, use: security.codesDisable)
        on(routes, Pages.passwordChange, use: security.passwordChange)
        on(routes, Pages.sessionSignOut, use: security.sessionSignOut)
        on(routes, Pages.deviceRemove, use: security.deviceRemove)
        on(routes, Pages.signOutEverywhere, use: security.signOutEverywhere)
        on(routes, Pages.verifyEmail, use: security.verifyEmailPage)
        on(routes, Pages.verifyEmail.form, use: security.verifyEmailSubmit)
        on(routes, Pages.resendVerification, use: security.resendVerification)
        on(routes, Pages.forgotPassword, use: passwords.forgotPasswordPage)
        on(routes, Pages.forgotPassword.form, use: passwords.forgotPasswordSubmit)
        on(routes, Pages.passwordReset, use: passwords.passwordResetPage)
        on(routes, Pages.passwordReset.form, use: passwords.passwordResetSubmit)
        on(routes, Pages.recovery, use: recoveries.recoveryPage)
        on(routes, Pages.recovery.form, use: recoveries.recoveryStart)
        on(routes, Pages.recoveryStatus, use: recoveries.recoveryStatusPage)
        on(routes, Pages.recoveryVerify, use: recoveries.recoveryVerify)
        on(routes, Pages.recoveryPass, use: recoveries.recoveryPassPage)
        on(routes, Pages.recoveryPass.form, use: recoveries.recoveryPassSubmit)
        on(routes, Pages.recoveryCancel, use: recoveries.recoveryCancelPage)
        on(routes, Pages.recoveryCancel.form, use: recoveries.recoveryCancelSubmit)
        on(routes, Pages.admin, use: admin.adminUsers)
        on(routes, Pages.adminUser, use: admin.adminUser)
        on(routes, Pages.adminUnlock, use: admin.adminUnlock)
        on(routes, Pages.adminResetMFA, use: admin.adminResetMFA)
        on(routes, Pages.adminRecovery, use: admin.adminRecovery)
        on(routes, Pages.adminRecoveryDecide, use: admin.adminRecoveryDecide)
        on(routes, Pages.adminRecoveryDocument, use: admin.adminRecoveryDocument)
        on(routes, Pages.adminAudit, use: admin.adminAudit)
    }

    /// Registers `handler` for `page` (the only way a page is registered). A form's body may
    /// hold a recovery document, so forms read up to that much.
    private func on(
        _ routes: any RoutesBuilder, _ page: Page, use handler: @escaping @Sendable (Request) async throws -> Response
    ) {
        let path = EndpointComponent.parse(page.path).map { component -> PathComponent in
            switch component {
            case .constant(let text): .constant(text)
            case .parameter(let name): .parameter(name)
            }
        }
        let limit = ByteCount(value: (RecoveryDocument.maximumBytes / 3 + 1) * 4 + 64 * 1024)
        routes.on(
            HTTPMethod(rawValue: page.method.rawValue), path,
            body: page.method == .get ? .collect : .collect(maxSize: limit)
        ) { request in
            do {
                return try await handler(request)
            } catch let detour as Detour {
                return detour.response
            }
        }
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(
            status: .ok,
            headers: [
                "Content-Type": type, "X-Content-Type-Options": "nosniff", "Cache-Control": "public, max-age=300",
            ], body: .init(string: text))
    }
}

/// Where a page sends a visitor instead of showing itself (the sign-in page, a refusal).
struct Detour: Error, @unchecked Sendable {
    // Unchecked: a response made for this request and handed back to it, never shared.
    let response: Response
}

/// A form that carries its CSRF token in `csrf`.
protocol CSRFCarrying {
    var csrf: String? { get }
}

/// Date and time as a page shows them.
enum PageTime {
    static func text(_ date: Date?) -> String {
        guard let date else { return "never" }
        return FactorChanges.moment(date)
    }

    /// A moment as a page shows it: a `<time>` that says it in UTC, which the pages' script
    /// says again in the person's own time zone, and relatively when it is within a week
    /// ("in 5 minutes", "3 days ago"), the exact time kept as its title.
    static func shown(_ date: Date?) -> Markup {
        guard let date else { return "never" }
        return "<time datetime=\"\(machine(date))\" data-local>\(text(date))</time>"
    }

    /// For a `<time datetime>`: ISO 8601 in UTC.
    static func machine(_ date: Date) -> String {
        ISO8601DateFormatter.string(from: date, timeZone: .gmt, formatOptions: [.withInternetDateTime])
    }
}

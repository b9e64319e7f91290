import Foundation

/// A page the server renders for a browser (`API.md` "Web pages"), beside the JSON endpoints of
/// `API`: its path from the root and what a person calls it. Pages live outside `/api/`; a
/// refusal on one is answered as an HTML page, not a problem document.
public struct Page: Sendable, Hashable, CustomStringConvertible {
    /// The path from the root, without its leading slash (`""` is the root); `{name}` for a
    /// parameter, as in `Endpoint`.
    public let path: String
    /// The page's title, as its `<title>` and headings name it.
    public let title: String
    /// `GET` for a page, `POST` for the form that posts to it.
    public let method: HTTPVerb

    public init(_ path: String, title: String, method: HTTPVerb = .get) {
        precondition(!path.hasPrefix("/") && !path.hasPrefix("api/"), "a page's path is relative and outside /api/")
        self.path = path
        self.title = title
        self.method = method
    }

    /// The route, as `Endpoint.route` writes one (`GET /account/security`).
    public var route: String { "\(method.rawValue) /\(path)" }
    public var description: String { route }

    /// The path from the root with its leading slash, `value` in its parameter if it has one.
    public func href(_ value: String? = nil) -> String {
        "/" + Escaping.path(EndpointComponent.parse(path), value: value)
    }

    /// The form that posts to this page's path.
    public var form: Page { Page(path, title: title, method: .post) }

    /// The page's URL under `base` (a server's root).
    public func url(relativeTo base: URL) -> URL {
        path.isEmpty ? base : base.appendingPathComponent(path)
    }
}

/// Every page and form, defined once: the server registers each from here, and a test checks
/// that the routes it serves are `API.all` and these, and nothing else. The sign-in page is the
/// root.
public enum Pages {
    public static let signIn = Page("", title: "Sign in")
    /// The second step of a sign-in, posted from the sign-in page's answer.
    public static let secondStep = Page("sign-in/verify", title: "Confirm it's you", method: .post)
    public static let resendCode = Page("sign-in/resend", title: "Send another code", method: .post)
    /// "Approve on your phone": asks the phone and shows the number while it waits (issue Z).
    public static let pushStart = Page("sign-in/phone", title: "Approve on your phone", method: .post)
    /// An approved request completes the sign-in (the script posts it when the phone answers).
    public static let pushComplete = Page("sign-in/phone/done", title: "Approve on your phone", method: .post)
    public static let register = Page("register", title: "Create an account")
    public static let signOut = Page("sign-out", title: "Sign out", method: .post)
    public static let accountSecurity = Page("account/security", title: "Account security")
    public static let totpSetup = Page("account/security/totp", title: "Set up an authenticator app", method: .post)
    public static let totpConfirm = Page(
        "account/security/totp/confirm", title: "Save your backup codes", method: .post)
    public static let forgetDevice = Page(
        "account/security/remembered-devices/{deviceID}/forget", title: "Forget a remembered device", method: .post)
    public static let totpRemove = Page(
        "account/security/totp/remove", title: "Turn off the authenticator app", method: .post)
    public static let backupCodesRegenerate = Page(
        "account/security/backup-codes", title: "New backup codes", method: .post)
    public static let passkeyRename = Page(
        "account/security/passkeys/{credentialID}/rename", title: "Rename a passkey", method: .post)
    public static let passkeyDelete = Page(
        "account/security/passkeys/{credentialID}/delete", title: "Delete a passkey", method: .post)
    /// SMS (`sms`) or email (`email`) codes: send a code to turn them on, confirm it, turn them off.
    public static let codesSetup = Page(
        "account/security/codes/{channel}", title: "Turn on sign-in codes", method: .post)
    public static let codesConfirm = Page(
        "account/security/codes/{channel}/confirm", title: "Turn on sign-in codes", method: .post)
    public static let codesDisable = Page(
        "account/security/codes/{channel}/disable", title: "Turn off sign-in codes", method: .post)
    public static let passwordChange = Page(
        "account/security/password", title: "Change your password", method: .post)
    /// One other session signed out, and one device with a key removed.
    public static let sessionSignOut = Page(
        "account/security/sessions/{sessionID}/sign-out", title: "Sign out a session", method: .post)
    public static let deviceRemove = Page(
        "account/security/devices/{deviceID}/remove", title: "Remove a device", method: .post)
    public static let signOutEverywhere = Page(
        "account/security/sign-out-everywhere", title: "Sign out everywhere", method: .post)
    /// "Forgot password?": the address to send a reset link to.
    public static let forgotPassword = Page("password/forgot", title: "Reset your password")
    /// The emailed reset link (`?token=`): the new password, and a second factor where the
    /// account has one.
    public static let passwordReset = Page("password/reset", title: "Choose a new password")
    /// The emailed verification link (`?token=`): one button confirms the address (a link
    /// scanner's visit confirms nothing).
    public static let verifyEmail = Page("account/email/verify", title: "Confirm your email address")
    /// Another verification link, from the security page.
    public static let resendVerification = Page(
        "account/security/email/verify", title: "Send another link", method: .post)
    public static let recovery = Page("recovery", title: "Account recovery")
    /// A recovery request's state, and the form for its email code.
    public static let recoveryStatus = Page("recovery/requests/{recoveryID}", title: "Your recovery request")
    public static let recoveryVerify = Page(
        "recovery/requests/{recoveryID}", title: "Your recovery request", method: .post)
    /// The approved pass, from the link in its email (`?token=`): signs in once.
    public static let recoveryPass = Page("recovery/pass", title: "Recover your account")
    /// "This wasn't me", from the link in every recovery notice (`?token=`).
    public static let recoveryCancel = Page("recovery/cancel", title: "Cancel account recovery")
    public static let admin = Page("admin", title: "Administration")
    public static let adminUser = Page("admin/users/{userID}", title: "User")
    public static let adminUnlock = Page("admin/users/{userID}/unlock", title: "Unlock", method: .post)
    public static let adminResetMFA = Page(
        "admin/users/{userID}/reset-mfa", title: "Reset sign-in methods", method: .post)
    public static let adminRecovery = Page("admin/recovery", title: "Recovery requests")
    public static let adminRecoveryDecide = Page(
        "admin/recovery/{recoveryID}/decide", title: "Decide a recovery request", method: .post)
    public static let adminRecoveryDocument = Page("admin/recovery/{recoveryID}/document", title: "Document")
    public static let adminAudit = Page("admin/audit", title: "Audit log")
    /// Confirm it's you: a passkey, a code or the password again, as the change asked
    /// (`?next=` the page to go back to, `&need=` what the change needs). The pages' script opens
    /// it when a passkey's addition is refused for want of a step-up.
    public static let stepUpPrompt = Page("step-up", title: "Confirm it's you")
    /// Its forms: a code or the password (`method`), another method's field (`switch=1`), or a
    /// code sent by SMS or email (`send=1`).
    public static let stepUp = stepUpPrompt.form
    /// "Approve on your phone" for a step-up: asks the phone and shows the number while the page
    /// waits; the approval is then posted to `stepUp` (`method=push`, `requestId`).
    public static let stepUpPhone = Page("step-up/phone", title: "Confirm it's you", method: .post)
    /// A passkey's answer, which the pages' script posts as a form (`credential`, with the
    /// options from the JSON API): a sign-in with no password, or a login flow's second step.
    /// The script adds a passkey with the JSON API alone (the session cookie and `X-CSRF-Token`).
    public static let passkeySignIn = Page("sign-in/passkey", title: "Sign in with a passkey", method: .post)
    /// The pages' one stylesheet and their script (passkeys need script; nothing else does).
    public static let stylesheet = Page("assets/twofold.css", title: "Stylesheet")
    public static let script = Page("assets/twofold.js", title: "Script")

    public static let all: [Page] = [
        signIn, signIn.form, secondStep, resendCode, pushStart, pushComplete, register, register.form, signOut,
        accountSecurity, totpSetup,
        totpConfirm, totpRemove, backupCodesRegenerate, passkeyRename, passkeyDelete, codesSetup, codesConfirm,
        codesDisable, passwordChange, forgetDevice, sessionSignOut, deviceRemove, signOutEverywhere, recovery,
        recovery.form, recoveryStatus, forgotPassword, forgotPassword.form, passwordReset, passwordReset.form,
        verifyEmail, verifyEmail.form, resendVerification,
        recoveryVerify,
        recoveryPass, recoveryPass.form, recoveryCancel, recoveryCancel.form, admin, adminUser, adminUnlock,
        adminResetMFA, adminRecovery, adminRecoveryDecide, adminRecoveryDocument, adminAudit, stepUpPrompt, stepUp,
        stepUpPhone,
        passkeySignIn,
        stylesheet, script,
    ]
}

import Foundation

/// The product rules of `API.md` an operator may change (throttles, lockouts, lifetimes and
/// cooldowns), with the contract's values as defaults. Each is one `TWOFOLD_` variable, listed
/// in `.env.example`; a value out of its range stops start-up with an error naming it.
public struct ProductRules: Sendable, Equatable {
    /// A token bucket: `burst` requests at once, then one more every `refillSeconds`.
    public struct Throttle: Sendable, Equatable {
        public var burst: Int
        public var refillSeconds: Double

        public init(burst: Int, refillSeconds: Double) {
            self.burst = burst
            self.refillSeconds = refillSeconds
        }
    }

    /// Password sign-ins per client address (`TWOFOLD_THROTTLE_LOGIN_PER_ADDRESS`); also the
    /// anonymous device sign-in endpoints' per-address bucket.
    public var loginPerAddress = Throttle(burst: 30, refillSeconds: 2)
    /// Password sign-ins per account from one address (`TWOFOLD_THROTTLE_LOGIN_PER_ACCOUNT_AND_ADDRESS`).
    public var loginPerAccountAndAddress = Throttle(burst: 5, refillSeconds: 60)
    /// Password sign-ins per account from anywhere (`TWOFOLD_THROTTLE_LOGIN_PER_ACCOUNT`).
    public var loginPerAccount = Throttle(burst: 100, refillSeconds: 1)
    /// Registrations per client address (`TWOFOLD_THROTTLE_REGISTER_PER_ADDRESS`).
    public var registerPerAddress = Throttle(burst: 10, refillSeconds: 60)
    /// Wrong current passwords on `PUT /account/password` per account
    /// (`TWOFOLD_THROTTLE_PASSWORD_CHANGE`).
    public var passwordChange = Throttle(burst: 5, refillSeconds: 180)
    /// Passkey options and device-key challenges one user may ask for
    /// (`TWOFOLD_THROTTLE_CHALLENGES_PER_USER`).
    public var challengesPerUser = Throttle(burst: 30, refillSeconds: 2)

    /// Consecutive wrong codes that lock a factor, and that end one SMS or email code
    /// (`TWOFOLD_LOCK_AFTER_FAILURES`).
    public var lockAfterFailures = 5
    /// The first lock's length; each further lock doubles it (`TWOFOLD_LOCK_SECONDS`).
    public var firstLockout: TimeInterval = 5 * 60
    /// The longest a doubling lock grows (`TWOFOLD_LOCK_LONGEST_SECONDS`).
    public var longestLockout: TimeInterval = 24 * 3600
    /// Wrong codes in a day that lock the whole account until an admin unlocks it
    /// (`TWOFOLD_ACCOUNT_LOCK_FAILURES`).
    public var accountLockFailures = 20

    /// How long an SMS or email code works (`TWOFOLD_CODE_LIFETIME_SECONDS`).
    public var codeLifetime: TimeInterval = 5 * 60
    /// The wait before another code may be sent for the same flow (`TWOFOLD_CODE_RESEND_SECONDS`).
    public var codeResendAfter: TimeInterval = 60
    /// Codes sent to one user in an hour (`TWOFOLD_CODE_SENDS_PER_HOUR`); anonymous SMS
    /// sign-in requests have a budget of the same size of their own.
    public var codeSendsPerHour = 5

    /// How long the second step of a sign-in may follow the password (`TWOFOLD_LOGIN_FLOW_SECONDS`).
    public var loginFlowLifetime: TimeInterval = 5 * 60
    /// How recent a second factor must be for step-up (`TWOFOLD_STEP_UP_SECONDS`).
    public var stepUpWindow: TimeInterval = 5 * 60
    /// How long a device-key challenge lives (`TWOFOLD_DEVICE_CHALLENGE_SECONDS`).
    public var deviceChallengeLifetime: TimeInterval = 5 * 60
    /// How long a remembered device skips the second step (`TWOFOLD_TRUSTED_DEVICE_DAYS`).
    public var trustedDeviceLifetime: TimeInterval = 30 * 24 * 3600
    /// How long an authenticator-app secret waits for its first code (`TWOFOLD_TOTP_PENDING_SECONDS`).
    public var pendingTOTPLifetime: TimeInterval = 10 * 60
    /// Consecutive wrong PINs that block a device's PIN (`TWOFOLD_PIN_ATTEMPTS`).
    public var pinAttempts = 3
    /// Backup codes left at which the answer warns (`TWOFOLD_BACKUP_CODES_WARN_AT`).
    public var backupCodesWarnAt = 3

    /// How long an approved recovery's pass works (`TWOFOLD_RECOVERY_PASS_SECONDS`, a day).
    public var recoveryPassLifetime: TimeInterval = 24 * 3600
    /// A waiting period between approval and when the pass starts to work
    /// (`TWOFOLD_RECOVERY_WAIT_SECONDS`, none by default): time for the owner to answer "this
    /// wasn't me" to the notices.
    public var recoveryWait: TimeInterval = 0
    /// How long a request whose email was proven waits for review before it expires
    /// (`TWOFOLD_RECOVERY_REVIEW_DAYS`, 14).
    public var recoveryReviewLifetime: TimeInterval = 14 * 86_400
    /// How long a "this wasn't me" link works after the request started (10 days).
    public var recoveryCancelWindow: TimeInterval = 10 * 86_400
    /// Recovery requests started from one client address (`TWOFOLD_THROTTLE_RECOVERY_PER_ADDRESS`).
    public var recoveryPerAddress = Throttle(burst: 5, refillSeconds: 720)
    /// Recovery requests started for one email address, whether an account has it or not
    /// (`TWOFOLD_THROTTLE_RECOVERY_PER_ACCOUNT`).
    public var recoveryPerAccount = Throttle(burst: 3, refillSeconds: 28_800)

    /// How long a forgotten password's emailed link works (`TWOFOLD_PASSWORD_RESET_SECONDS`, 30
    /// minutes).
    public var passwordResetLifetime: TimeInterval = 30 * 60
    /// Reset links asked for from one client address (`TWOFOLD_THROTTLE_PASSWORD_RESET_PER_ADDRESS`).
    public var passwordResetPerAddress = Throttle(burst: 5, refillSeconds: 720)
    /// Reset links asked for one email address, whether an account has it or not
    /// (`TWOFOLD_THROTTLE_PASSWORD_RESET_PER_ACCOUNT`).
    public var passwordResetPerAccount = Throttle(burst: 3, refillSeconds: 1200)
    /// Second factors tried (and SMS codes sent) for password resets of one account: five, then
    /// one every four hours, so that the mailbox alone never reaches the wrong codes a day that
    /// lock the account (`accountLockFailures`).
    public var passwordResetTries = Throttle(burst: 5, refillSeconds: 14_400)
    /// How long a link that verifies the account's address works (`TWOFOLD_EMAIL_VERIFY_HOURS`, 48).
    public var emailVerificationLifetime: TimeInterval = 48 * 3600
    /// Verification links one account may ask for again (three at once, then one every ten
    /// minutes).
    public var emailVerificationPerAccount = Throttle(burst: 3, refillSeconds: 600)

    /// "Approve on your phone" (issue Z): how long a request waits for the phone.
    public var pushLifetime: TimeInterval = 120
    /// Requests per account per hour; after them push is not offered (codes and passkeys are).
    public var pushPerHour = 5
    /// Refusals in a row on the phone (deny, wrong number, "This wasn't me") that turn push off…
    public var pushDenialsToPause = 3
    /// … for this long, and tell the owner.
    public var pushPause: TimeInterval = 3600

    public init() {}

    /// Reads every rule; unset variables keep the defaults.
    static func load(_ reader: EnvironmentReader) throws(ConfigurationError) -> ProductRules {
        var rules = ProductRules()
        rules.loginPerAddress = try reader.throttle(
            "TWOFOLD_THROTTLE_LOGIN_PER_ADDRESS", default: rules.loginPerAddress)
        rules.loginPerAccountAndAddress = try reader.throttle(
            "TWOFOLD_THROTTLE_LOGIN_PER_ACCOUNT_AND_ADDRESS", default: rules.loginPerAccountAndAddress)
        rules.loginPerAccount = try reader.throttle(
            "TWOFOLD_THROTTLE_LOGIN_PER_ACCOUNT", default: rules.loginPerAccount)
        rules.registerPerAddress = try reader.throttle(
            "TWOFOLD_THROTTLE_REGISTER_PER_ADDRESS", default: rules.registerPerAddress)
        rules.passwordChange = try reader.throttle("TWOFOLD_THROTTLE_PASSWORD_CHANGE", default: rules.passwordChange)
        rules.challengesPerUser = try reader.throttle(
            "TWOFOLD_THROTTLE_CHALLENGES_PER_USER", default: rules.challengesPerUser)

        rules.lockAfterFailures = try reader.integer(
            "TWOFOLD_LOCK_AFTER_FAILURES", default: rules.lockAfterFailures, in: 3...20)
        rules.firstLockout = try reader.seconds("TWOFOLD_LOCK_SECONDS", default: rules.firstLockout, in: 30...86_400)
        rules.longestLockout = try reader.seconds(
            "TWOFOLD_LOCK_LONGEST_SECONDS", default: rules.longestLockout, in: 60...(30 * 86_400))
        guard rules.longestLockout >= rules.firstLockout else {
            throw ConfigurationError(
                variable: "TWOFOLD_LOCK_LONGEST_SECONDS", message: "must be at least TWOFOLD_LOCK_SECONDS")
        }
        rules.accountLockFailures = try reader.integer(
            "TWOFOLD_ACCOUNT_LOCK_FAILURES", default: rules.accountLockFailures, in: 5...1000)

        rules.codeLifetime = try reader.seconds(
            "TWOFOLD_CODE_LIFETIME_SECONDS", default: rules.codeLifetime, in: 60...3600)
        rules.codeResendAfter = try reader.seconds(
            "TWOFOLD_CODE_RESEND_SECONDS", default: rules.codeResendAfter, in: 10...3600)
        rules.codeSendsPerHour = try reader.integer(
            "TWOFOLD_CODE_SENDS_PER_HOUR", default: rules.codeSendsPerHour, in: 1...100)

        rules.loginFlowLifetime = try reader.seconds(
            "TWOFOLD_LOGIN_FLOW_SECONDS", default: rules.loginFlowLifetime, in: 60...3600)
        rules.stepUpWindow = try reader.seconds("TWOFOLD_STEP_UP_SECONDS", default: rules.stepUpWindow, in: 60...3600)
        rules.deviceChallengeLifetime = try reader.seconds(
            "TWOFOLD_DEVICE_CHALLENGE_SECONDS", default: rules.deviceChallengeLifetime, in: 30...3600)
        rules.trustedDeviceLifetime =
            TimeInterval(try reader.integer("TWOFOLD_TRUSTED_DEVICE_DAYS", default: 30, in: 1...365)) * 86_400
        rules.pendingTOTPLifetime = try reader.seconds(
            "TWOFOLD_TOTP_PENDING_SECONDS", default: rules.pendingTOTPLifetime, in: 60...86_400)
        rules.pinAttempts = try reader.integer("TWOFOLD_PIN_ATTEMPTS", default: rules.pinAttempts, in: 1...10)
        rules.backupCodesWarnAt = try reader.integer(
            "TWOFOLD_BACKUP_CODES_WARN_AT", default: rules.backupCodesWarnAt, in: 0...10)
        rules.recoveryPassLifetime = try reader.seconds(
            "TWOFOLD_RECOVERY_PASS_SECONDS", default: rules.recoveryPassLifetime, in: 300...(30 * 86_400))
        rules.recoveryWait = try reader.seconds(
            "TWOFOLD_RECOVERY_WAIT_SECONDS", default: rules.recoveryWait, in: 0...(30 * 86_400))
        rules.recoveryReviewLifetime =
            TimeInterval(try reader.integer("TWOFOLD_RECOVERY_REVIEW_DAYS", default: 14, in: 1...90)) * 86_400
        rules.recoveryPerAddress = try reader.throttle(
            "TWOFOLD_THROTTLE_RECOVERY_PER_ADDRESS", default: rules.recoveryPerAddress)
        rules.recoveryPerAccount = try reader.throttle(
            "TWOFOLD_THROTTLE_RECOVERY_PER_ACCOUNT", default: rules.recoveryPerAccount)
        rules.passwordResetLifetime = try reader.seconds(
            "TWOFOLD_PASSWORD_RESET_SECONDS", default: rules.passwordResetLifetime, in: 300...86_400)
        rules.passwordResetPerAddress = try reader.throttle(
            "TWOFOLD_THROTTLE_PASSWORD_RESET_PER_ADDRESS", default: rules.passwordResetPerAddress)
        rules.passwordResetPerAccount = try reader.throttle(
            "TWOFOLD_THROTTLE_PASSWORD_RESET_PER_ACCOUNT", default: rules.passwordResetPerAccount)
        rules.emailVerificationLifetime =
            TimeInterval(try reader.integer("TWOFOLD_EMAIL_VERIFY_HOURS", default: 48, in: 1...720)) * 3600
        rules.pushLifetime = try reader.seconds("TWOFOLD_PUSH_SECONDS", default: rules.pushLifetime, in: 30...600)
        rules.pushPerHour = try reader.integer("TWOFOLD_PUSH_PER_HOUR", default: rules.pushPerHour, in: 1...60)
        rules.pushDenialsToPause = try reader.integer(
            "TWOFOLD_PUSH_DENIALS_TO_PAUSE", default: rules.pushDenialsToPause, in: 1...20)
        rules.pushPause = try reader.seconds("TWOFOLD_PUSH_PAUSE_SECONDS", default: rules.pushPause, in: 60...86_400)
        return rules
    }
}

extension EnvironmentReader {
    /// A whole number of seconds in `range`.
    func seconds(_ name: String, default fallback: TimeInterval, in range: ClosedRange<Int>)
        throws(ConfigurationError) -> TimeInterval
    {
        TimeInterval(try integer(name, default: Int(fallback), in: range))
    }

    /// `BURST/SECONDS`: that many requests at once, then one more every SECONDS (a decimal, such
    /// as `30/2` or `100/0.5`).
    func throttle(_ name: String, default fallback: ProductRules.Throttle) throws(ConfigurationError)
        -> ProductRules.Throttle
    {
        guard let text = optional(name) else { return fallback }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let burst = Int(parts[0]), (1...1_000_000).contains(burst),
            let seconds = Double(parts[1]), seconds.isFinite, (0.001...86_400).contains(seconds)
        else {
            throw ConfigurationError(
                variable: name,
                message: "must be BURST/SECONDS (requests at once, 1 to 1000000, then one more every SECONDS, "
                    + "0.001 to 86400), such as 10/60, not \(text.debugDescription)")
        }
        return ProductRules.Throttle(burst: burst, refillSeconds: seconds)
    }
}

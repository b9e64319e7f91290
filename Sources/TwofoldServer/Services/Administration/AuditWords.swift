import Foundation

/// The audit log as an administrator reads it (issue W item 7): each event in words, and a
/// sign-in's methods named, not coded (`pwd+backup` is "password and a backup code"). The stored
/// codes stay as they are: filters and exports use them.
enum AuditWords {
    static func event(_ type: String) -> String {
        guard let event = AuditEvent(rawValue: type) else { return type }
        switch event {
        case .userRegistered: return "Account created"
        case .adminCreated: return "Administrator created"
        case .loginSucceeded: return "Signed in"
        case .loginFailed: return "Sign-in refused"
        case .loginThrottled: return "Sign-in slowed down (too many tries)"
        case .loginSecondFactorRequired: return "Password accepted; second step asked"
        case .refreshTokenReused: return "A used session token came back (possible theft): session family ended"
        case .sessionRevoked: return "Signed out"
        case .allSessionsRevoked: return "Signed out everywhere"
        case .userUnlocked: return "Account unlocked by an administrator"
        case .factorAdded: return "Sign-in method added"
        case .factorRemoved: return "Sign-in method removed"
        case .lockout: return "Sign-in method locked after wrong codes"
        case .accountLocked: return "Account locked"
        case .trustedDeviceAdded: return "Device remembered"
        case .trustedDeviceRevoked: return "Remembered device forgotten"
        case .loginTrustedDevice: return "Signed in on a remembered device"
        case .passwordChanged: return "Password changed"
        case .phoneChanged: return "Phone number changed"
        case .emailChanged: return "Email address changed"
        case .emailVerified: return "Email address confirmed"
        case .passwordResetRequested: return "Password reset asked for"
        case .passwordReset: return "Password reset"
        case .devicePinSet: return "Device PIN set"
        case .devicePinBlocked: return "Device PIN blocked"
        case .devicePinUnblocked: return "Device PIN unblocked"
        case .deviceBiometricsAdded: return "Device biometrics added"
        case .deviceBiometricsRemoved: return "Device biometrics removed"
        case .passkeyPossibleClone: return "Passkey counter went back (possible copy)"
        case .passkeyBackupStateChanged: return "Passkey backup state changed"
        case .factorsReset: return "Every sign-in method removed"
        case .resetInterrupted: return "A removal of sign-in methods was cut short"
        case .pushRequested: return "Approval asked on the phone"
        case .pushApproved: return "Sign-in approved on the phone"
        case .pushDenied: return "Sign-in denied on the phone"
        case .pushWrongNumber: return "Wrong number picked on the phone: sign-in refused"
        case .pushReported: return "Sign-in reported on the phone as not the owner's"
        case .pushPaused: return "Approve on your phone turned off for now after refusals"
        case .pushBudgetSpent: return "Approve on your phone asked too often: the owner was told"
        case .recoveryStarted: return "Account recovery started"
        case .recoveryEmailProven: return "Recovery: email confirmed"
        case .recoveryApproved: return "Recovery approved"
        case .recoveryDocumentViewed: return "Recovery document opened"
        case .recoveryDenied: return "Recovery denied"
        case .recoveryCancelled: return "Recovery cancelled"
        case .recoveryCompleted: return "Recovery used to sign in"
        case .recoveryDisowned: return "Recovery disowned (\"this wasn't me\")"
        }
    }

    /// A detail with sign-in method codes (`pwd+totp`, `step-up: pwd`) named in words; any other
    /// detail as it is.
    static func detail(_ detail: String) -> String {
        let parts = detail.split(separator: "+", omittingEmptySubsequences: false).map(String.init)
        guard parts.count > 1 || methods[detail] != nil, parts.allSatisfy({ methods[$0] != nil }) else {
            return detail
        }
        let named = parts.compactMap { methods[$0] }
        return named.count == 1 ? named[0] : named.dropLast().joined(separator: ", ") + " and " + named.last!
    }

    private static let methods: [String: String] = [
        "pwd": "password", "totp": "an authenticator-app code", "otp": "a one-time code", "backup": "a backup code",
        "sms": "an SMS code", "email": "an email code", "webauthn": "a passkey", "passkey": "a passkey",
        "hwk": "a device key", "deviceKey": "a device key", "swk": "a software key", "pin": "a device PIN",
        "recovery": "a recovery pass",
    ]
}

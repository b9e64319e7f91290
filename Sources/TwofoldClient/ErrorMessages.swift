import Foundation
import TwofoldAPI

// Every public error of the SDK says what happened in a sentence a person can read in an
// alert (`localizedDescription`), with what to do next where there is something to do
// (`recoverySuggestion`). Never a token or a code: these words end up in logs.

extension APIError: LocalizedError {
    /// The server's own words when it sent a problem document; otherwise what the status means.
    public var errorDescription: String? {
        if let problem { return problem.detail ?? problem.title }
        return switch status {
        case 400, 422: Words.text("error.theServerCouldNotAcceptThe", "The server could not accept the request.")
        case 401: Words.text("error.youAreSignedOut", "You are signed out.")
        case 403: Words.text("error.thatIsNotAllowedForThis", "That is not allowed for this account.")
        case 404: Words.text("error.theServerDoesNotKnowWhat", "The server does not know what was asked for.")
        case 409: Words.text("error.thatConflictsWithAChangeMade", "That conflicts with a change made meanwhile.")
        case 429: Words.text("error.tooManyTries", "Too many tries.")
        case 500...: Words.text("error.theServerHadAProblem", "The server had a problem.")
        default:
            Words.text(
                "error.refusedWithStatus", "The server refused the request (HTTP {status}).", ["status": "\(status)"])
        }
    }

    /// When to try again (a lockout's end, a wait), or how to go on.
    public var recoverySuggestion: String? {
        if let lockoutUntil {
            return Words.text(
                "error.tryAgainAfter", "Try again after {time}.",
                ["time": lockoutUntil.formatted(date: .abbreviated, time: .shortened)])
        }
        if let retryAfter {
            return Words.text("error.tryAgainIn", "Try again in {wait}.", ["wait": ErrorWords.seconds(retryAfter)])
        }
        return switch status {
        case 401: Words.text("error.signInAgain", "Sign in again.")
        case 429: Words.text("error.waitALittleAndTryAgain", "Wait a little and try again.")
        case 500...: Words.text("error.tryAgainLater", "Try again later.")
        default: nil
        }
    }
}

extension UnreadableAnswer: LocalizedError {
    public var errorDescription: String? {
        Words.text("error.theServerSAnswerCouldNot", "The server's answer could not be read.")
    }
    public var recoverySuggestion: String? {
        Words.text("error.checkThatTheAppAndThe", "Check that the app and the server are up to date.")
    }
    public var failureReason: String? { description }
}

extension MissingResource: LocalizedError {
    public var errorDescription: String? {
        Words.text("error.nothingWasChosenToActOn", "Nothing was chosen to act on.")
    }
    public var failureReason: String? { description }
}

extension SessionError: LocalizedError {
    public var errorDescription: String? {
        switch self {
        case .signedOut: Words.text("error.youAreSignedOut", "You are signed out.")
        case .offline: Words.text("error.theServerCannotBeReached", "The server cannot be reached.")
        case .rateLimited: Words.text("error.tooManyTries", "Too many tries.")
        }
    }

    public var recoverySuggestion: String? {
        switch self {
        case .signedOut: Words.text("error.signInAgain", "Sign in again.")
        case .offline: Words.text("error.checkYourConnectionAndTryAgain", "Check your connection and try again.")
        case .rateLimited(let seconds?):
            Words.text("error.tryAgainIn", "Try again in {wait}.", ["wait": ErrorWords.seconds(seconds)])
        case .rateLimited(nil): Words.text("error.waitALittleAndTryAgain", "Wait a little and try again.")
        }
    }

    /// For `offline`, what kept the server out of reach, for a log.
    public var failureReason: String? {
        if case .offline(let unreachable) = self { return unreachable.reason }
        return nil
    }
}

extension Unreachable: LocalizedError {
    public var errorDescription: String? {
        Words.text("error.theServerCannotBeReached", "The server cannot be reached.")
    }
    public var recoverySuggestion: String? {
        Words.text("error.checkYourConnectionAndTryAgain", "Check your connection and try again.")
    }
    public var failureReason: String? { reason }
}

extension DeviceAuthFailure: LocalizedError {
    public var errorDescription: String? {
        switch self {
        case .userCancel: Words.text("error.youCancelled", "You cancelled.")
        case .biometryNotAvailable: Words.text("error.faceIdOrTouchIdIs", "Face ID or Touch ID is turned off.")
        case .biometryNotEnrolled:
            Words.text("error.noFaceOrFingerprintIsSet", "No face or fingerprint is set up on this device.")
        case .passcodeNotSet: Words.text("error.thisDeviceHasNoPasscode", "This device has no passcode.")
        case .biometryLockout:
            Words.text("error.faceIdOrTouchIdIs2", "Face ID or Touch ID is locked after too many tries.")
        case .authenticationFailed: Words.text("error.youCouldNotBeRecognised", "You could not be recognised.")
        case .keyInvalidated: Words.text("error.thisDeviceSKeyCanNo", "This device's key can no longer be used.")
        }
    }

    public var recoverySuggestion: String? {
        switch self {
        case .userCancel, .biometryNotAvailable, .biometryLockout:
            Words.text("error.useTheDevicePasscodeInstead", "Use the device passcode instead.")
        case .biometryNotEnrolled:
            Words.text("error.setUpFaceIdOrTouch", "Set up Face ID or Touch ID in Settings, or use the passcode.")
        case .passcodeNotSet:
            Words.text("error.setAPasscodeInSettingsTo", "Set a passcode in Settings to protect this device.")
        case .authenticationFailed: Words.text("error.tryAgain", "Try again.")
        case .keyInvalidated: Words.text("error.setUpThisDeviceAgain", "Set up this device again.")
        }
    }
}

extension PasskeyCancelled: LocalizedError {
    public var errorDescription: String? { Words.text("error.youCancelledThePasskey", "You cancelled the passkey.") }
}

extension TokenStoreNotReadableYet: LocalizedError {
    public var errorDescription: String? {
        Words.text("error.yourSessionCannotBeReadUntil", "Your session cannot be read until the device is unlocked.")
    }
    public var recoverySuggestion: String? {
        Words.text("error.unlockTheDeviceAndTryAgain", "Unlock the device and try again.")
    }
}

extension TokenFileNotPrivate: LocalizedError {
    public var errorDescription: String? {
        Words.text("error.theSessionFileMayBeRead", "The session file may be read by others, so it was not used.")
    }
    public var recoverySuggestion: String? {
        Words.text("error.removeAndSignIn", "Remove {path} and sign in again.", ["path": path])
    }
}

extension TokenStoreBusy: LocalizedError {
    public var errorDescription: String? {
        Words.text("error.anotherProgramIsUsingTheSession", "Another program is using the session file.")
    }
    public var recoverySuggestion: String? { Words.text("error.tryAgainInAMoment", "Try again in a moment.") }
}

extension PrivateFile.NotPrivate: LocalizedError {
    public var errorDescription: String? {
        Words.text(
            "error.aFileThatShouldBePrivate", "A file that should be private may be read by others, so it was not used."
        )
    }
    public var recoverySuggestion: String? {
        Words.text("error.removeAndTryAgain", "Remove {path} and try again.", ["path": path])
    }
}

enum ErrorWords {
    /// "1 second", "30 seconds", "2 minutes".
    static func seconds(_ seconds: Int) -> String {
        if seconds >= 120, seconds % 60 == 0 {
            return Words.text("wait.minutes", "{count} minutes", ["count": "\(seconds / 60)"])
        }
        return seconds == 1
            ? Words.text("wait.oneSecond", "1 second")
            : Words.text("wait.seconds", "{count} seconds", ["count": "\(seconds)"])
    }
}

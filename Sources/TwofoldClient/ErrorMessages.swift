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
        case 400, 422: "The server could not accept the request."
        case 401: "You are signed out."
        case 403: "That is not allowed for this account."
        case 404: "The server does not know what was asked for."
        case 409: "That conflicts with a change made meanwhile."
        case 429: "Too many tries."
        case 500...: "The server had a problem."
        default: "The server refused the request (HTTP \(status))."
        }
    }

    /// When to try again (a lockout's end, a wait), or how to go on.
    public var recoverySuggestion: String? {
        if let lockoutUntil {
            return "Try again after \(lockoutUntil.formatted(date: .abbreviated, time: .shortened))."
        }
        if let retryAfter { return "Try again in \(ErrorWords.seconds(retryAfter))." }
        return switch status {
        case 401: "Sign in again."
        case 429: "Wait a little and try again."
        case 500...: "Try again later."
        default: nil
        }
    }
}

extension UnreadableAnswer: LocalizedError {
    public var errorDescription: String? { "The server's answer could not be read." }
    public var recoverySuggestion: String? { "Check that the app and the server are up to date." }
    public var failureReason: String? { description }
}

extension MissingResource: LocalizedError {
    public var errorDescription: String? { "Nothing was chosen to act on." }
    public var failureReason: String? { description }
}

extension SessionError: LocalizedError {
    public var errorDescription: String? {
        switch self {
        case .signedOut: "You are signed out."
        case .offline: "The server cannot be reached."
        case .rateLimited: "Too many tries."
        }
    }

    public var recoverySuggestion: String? {
        switch self {
        case .signedOut: "Sign in again."
        case .offline: "Check your connection and try again."
        case .rateLimited(let seconds?): "Try again in \(ErrorWords.seconds(seconds))."
        case .rateLimited(nil): "Wait a little and try again."
        }
    }

    /// For `offline`, what kept the server out of reach, for a log.
    public var failureReason: String? {
        if case .offline(let unreachable) = self { return unreachable.reason }
        return nil
    }
}

extension Unreachable: LocalizedError {
    public var errorDescription: String? { "The server cannot be reached." }
    public var recoverySuggestion: String? { "Check your connection and try again." }
    public var failureReason: String? { reason }
}

extension DeviceAuthFailure: LocalizedError {
    public var errorDescription: String? {
        switch self {
        case .userCancel: "You cancelled."
        case .biometryNotAvailable: "Face ID or Touch ID is turned off."
        case .biometryNotEnrolled: "No face or fingerprint is set up on this device."
        case .passcodeNotSet: "This device has no passcode."
        case .biometryLockout: "Face ID or Touch ID is locked after too many tries."
        case .authenticationFailed: "You could not be recognised."
        case .keyInvalidated: "This device's key can no longer be used."
        }
    }

    public var recoverySuggestion: String? {
        switch self {
        case .userCancel, .biometryNotAvailable, .biometryLockout: "Use the device passcode instead."
        case .biometryNotEnrolled: "Set up Face ID or Touch ID in Settings, or use the passcode."
        case .passcodeNotSet: "Set a passcode in Settings to protect this device."
        case .authenticationFailed: "Try again."
        case .keyInvalidated: "Set up this device again."
        }
    }
}

extension PasskeyCancelled: LocalizedError {
    public var errorDescription: String? { "You cancelled the passkey." }
}

extension TokenStoreNotReadableYet: LocalizedError {
    public var errorDescription: String? { "Your session cannot be read until the device is unlocked." }
    public var recoverySuggestion: String? { "Unlock the device and try again." }
}

extension TokenFileNotPrivate: LocalizedError {
    public var errorDescription: String? { "The session file may be read by others, so it was not used." }
    public var recoverySuggestion: String? { "Remove \(path) and sign in again." }
}

extension TokenStoreBusy: LocalizedError {
    public var errorDescription: String? { "Another program is using the session file." }
    public var recoverySuggestion: String? { "Try again in a moment." }
}

extension PrivateFile.NotPrivate: LocalizedError {
    public var errorDescription: String? { "A file that should be private may be read by others, so it was not used." }
    public var recoverySuggestion: String? { "Remove \(path) and try again." }
}

enum ErrorWords {
    /// "1 second", "30 seconds", "2 minutes".
    static func seconds(_ seconds: Int) -> String {
        if seconds >= 120, seconds % 60 == 0 { return "\(seconds / 60) minutes" }
        return seconds == 1 ? "1 second" : "\(seconds) seconds"
    }
}

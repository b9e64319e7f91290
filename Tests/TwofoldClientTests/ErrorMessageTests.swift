import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What an app shows in an alert (`localizedDescription`) and writes in a log for each of the
/// SDK's errors: a sentence, what to do next where there is something to do, never Foundation's
/// "The operation could not be completed" and never a token.
@Suite struct ErrorMessageTests {
    static let lockedUntil = Date(timeIntervalSince1970: 1_900_000_000)

    /// One of each public error, as the SDK throws them.
    static let errors: [any Error] =
        [
            APIError(
                status: 400,
                problem: Problem(
                    status: 400, code: .invalidCode, title: "Invalid code", detail: "That code is wrong.",
                    attemptsRemaining: 4)),
            APIError(status: 503, problem: nil),
            APIError(status: 429, problem: nil, retryAfterHeader: 30),
            UnreadableAnswer(endpoint: "GET /api/v1/account", status: 200, reason: "keyNotFound"),
            MissingResource(endpoint: "DELETE /api/v1/passkeys/{id}"),
            SessionError.signedOut,
            SessionError.offline(Unreachable("the server could not be reached", underlying: URLError(.timedOut))),
            SessionError.rateLimited(retryAfter: 120),
            DeviceAuthFailure.biometryLockout,
            PasskeyCancelled(),
            TokenStoreNotReadableYet(),
            TokenFileNotPrivate(path: "/home/pat/.twofold/session.json"),
            TokenStoreBusy(path: "/home/pat/.twofold/session.json"),
            QueryRefusal(["limit": "must be 1 to 200"]),
        ] + [Self.unreadableLink()]

    static func unreadableLink() -> any Error {
        do {
            _ = try OTPAuthURI(parsing: "https://example.com")
            return MissingResource(endpoint: "unexpected")
        } catch {
            return error
        }
    }

    @Test(arguments: 0..<errors.count) func everyErrorSaysWhatHappenedInASentence(index: Int) {
        let error = Self.errors[index]
        let words = error.localizedDescription
        #expect(!words.contains("could not be completed"), "\(type(of: error)): \(words)")
        #expect(!words.contains("error 1") && !words.contains("Error Domain"), "\(words)")
        #expect(words.first?.isUppercase == true && (words.hasSuffix(".") || words.contains(": ")), "\(words)")
    }

    @Test func aRefusalSaysTheServersWordsAndWhenToTryAgain() throws {
        let problem = Problem(
            status: 423, code: .locked, title: "Locked", detail: "This method is locked after too many wrong codes.",
            lockoutUntil: Self.lockedUntil)
        let error = APIError(status: 423, problem: problem)
        #expect(error.localizedDescription == "This method is locked after too many wrong codes.")
        #expect(try #require(error.recoverySuggestion).hasPrefix("Try again after "))
        #expect(
            APIError(status: 429, problem: nil, retryAfterHeader: 30).recoverySuggestion == "Try again in 30 seconds.")
        #expect(APIError(status: 502, problem: nil).localizedDescription == "The server had a problem.")
        #expect(APIError(status: 502, problem: nil) == APIError(status: 502, problem: nil))
    }

    @Test func offlineKeepsTheErrorUnderneath() throws {
        let error = SessionError.offline(
            Unreachable("the server could not be reached", underlying: URLError(.timedOut)))
        guard case .offline(let unreachable) = error else {
            Issue.record("not offline")
            return
        }
        #expect((unreachable.underlying as? URLError)?.code == .timedOut)
        #expect(error.localizedDescription == "The server cannot be reached.")
        #expect(error.recoverySuggestion == "Check your connection and try again.")
        #expect((error as any LocalizedError).failureReason == "the server could not be reached")
    }

    @Test func aWaitIsSaidInWords() {
        #expect(SessionError.rateLimited(retryAfter: 120).recoverySuggestion == "Try again in 2 minutes.")
        #expect(SessionError.rateLimited(retryAfter: 1).recoverySuggestion == "Try again in 1 second.")
        #expect(DeviceAuthFailure.userCancel.recoverySuggestion == "Use the device passcode instead.")
    }
}

import Foundation
import TwofoldAPI

/// Step-up (seed 000), as a use case: the signed-in person proves a factor again, or the
/// password; the session's new access token has `auth_time` now, and the session records the
/// proof for `SignInPolicy`. Also the code and the passkey options a step-up is proven with.
struct StepUp: Sendable {
    let passwordReentry: PasswordReentry
    let audit: Auditor
    let sessions: SessionService
    let codes: OneTimeCodeService
    let users: any UserStore
    let secondFactors: SecondFactors
    let passkeys: PasskeyService
    let push: PushApprovals

    /// Checks `proof` for `caller`'s account; the session's new access token.
    func prove(_ proof: StepUpRequest, caller: AuthenticatedUser, origin: RequestOrigin) async throws -> TokenDTO {
        let methods = Set(FactorMethod.secondFactors + [.password, .push])
        guard methods.contains(proof.method) else {
            throw InputValidation.failure([
                "method": "must be one of \(methods.map(\.rawValue).sorted().joined(separator: ", "))"
            ])
        }
        guard let user = try await users.user(id: caller.userID) else {
            throw BearerAuthentication.unauthorized("The account no longer exists.")
        }
        if proof.method == .password {
            return try await provePassword(proof.password, user: user, caller: caller, origin: origin)
        }
        if proof.method == .push {
            // The phone approved with its device key: that key is the proof, as `deviceKey`.
            let proven = try await push.useForStepUp(proof.requestId, caller: caller)
            if try await sessions.proof(of: caller).added.contains(proven.factor) {
                throw Self.addedInThisSession(.deviceKey)
            }
            return try await sessions.stepUp(caller: caller, amr: "hwk", proof: proven)
        }
        let factor = FactorChanges.factorName(
            method: proof.method, deviceID: proof.deviceId,
            credentialID: proof.credential.map { PasskeyService.canonicalID($0.id) })
        // A factor this session added cannot vouch for it (issue S item 1): refused before the
        // factor is checked, so the refusal spends no attempt, and again after, from the session
        // as stored then, for an addition that raced this request.
        if caller.proof.added.contains(factor) { throw Self.addedInThisSession(proof.method) }
        let deviceKey = SecondFactors.DeviceKeyProof(
            deviceId: proof.deviceId, challengeId: proof.challengeId, signature: proof.signature)
        switch try await secondFactors.verify(
            method: proof.method, code: proof.code, deviceKey: deviceKey, passkey: proof.credential, for: user,
            origin: origin)
        {
        case .notEnabled:
            throw Problem(
                status: 422, code: .validationFailed, title: "Factor not enabled",
                detail: "This account has no \(proof.method) factor to step up with.", errors: ["method": "not enabled"]
            )
        case .verified(let amr, let proven, _):
            if try await sessions.proof(of: caller).added.contains(proven.factor) {
                throw Self.addedInThisSession(proof.method)
            }
            // A code to a phone or mailbox that is not one of the account's factors proves the
            // destination, not a second factor: recorded for the policy, left out of `amr`.
            let kinds = try await secondFactors.credentials(for: user).secondFactorKinds
            return try await sessions.stepUp(
                caller: caller, amr: kinds.contains(proven.method) ? amr : nil, proof: proven)
        }
    }

    /// Asks the account's phone to approve a step-up of `caller`'s session: the number to show.
    func askPhone(caller: AuthenticatedUser, origin: RequestOrigin) async throws -> PushStartResponse {
        try await push.startStepUp(caller: caller, origin: origin)
    }

    /// The password re-entered: what a password-only account proves before adding a way in, and
    /// half of what removes a factor (seed 004 scenarios 8 and 9). Throttled as a password change.
    private func provePassword(
        _ password: String?, user: User, caller: AuthenticatedUser, origin: RequestOrigin
    ) async throws -> TokenDTO {
        guard let password, (1...256).contains(password.unicodeScalars.count) else {
            throw InputValidation.failure(["password": "is required (1 to 256 characters)"])
        }
        guard try await passwordReentry.matches(password, of: user) else {
            try await audit.record(.loginFailed, user: user.id, detail: "step-up: wrong password", origin: origin)
            throw Problem(
                status: 401, code: .invalidCredentials, title: "Wrong password", detail: "The password is wrong.",
                errors: ["password": "is wrong"])
        }
        return try await sessions.stepUp(caller: caller, amr: "pwd", proof: .password)
    }

    static func addedInThisSession(_ method: FactorMethod) -> Problem {
        Problem(
            status: 403, code: .stepUpRequired, title: "Factor added in this session",
            detail: "A \(method) factor added in this session cannot confirm it; use a factor you had "
                + "before, or sign in again.", errors: ["method": "was added in this session"])
    }

    /// Options for a passkey assertion that steps up `userID`'s session, naming their passkeys.
    func passkeyOptions(userID: UUID) async throws -> PasskeyRequestOptions {
        try await passkeys.requestOptions(.stepUp, userID: userID, flowID: nil)
    }

    /// Sends an SMS or email code to step up with, to the destination on file (factor or not),
    /// with the same cooldown and hourly limit as login codes.
    func sendCode(_ method: FactorMethod, to user: User) async throws -> CodeSentResponse {
        let codeMethods = DeliveryChannel.allCases.filter { user.destination(for: $0) != nil }.map(\.method)
        guard codeMethods.contains(method), let channel = DeliveryChannel(method),
            let destination = user.destination(for: channel)
        else {
            throw InputValidation.failure([
                "method": "must be one of this account's code methods: \(codeMethods.map(\.rawValue))"
            ])
        }
        return try await codes.send(channel, purpose: .stepUp, to: destination, userID: user.id, flowID: nil)
    }
}

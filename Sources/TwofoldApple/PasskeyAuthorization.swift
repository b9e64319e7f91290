#if canImport(AuthenticationServices) && canImport(UIKit) && os(iOS)
    import AuthenticationServices
    import Foundation
    import TwofoldAPI
    import TwofoldClient
    import TwofoldCore
    import UIKit

    /// Options or an answer the passkey sheet cannot use: a challenge or ID that is not
    /// base64url, or a credential of another kind than was asked for.
    public struct PasskeyAuthorizationFailure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What was wrong.
        public let description: String
    }

    /// Passkeys on iOS: the server's WebAuthn options (seed 000) turned into
    /// `ASAuthorizationPlatformPublicKeyCredentialProvider` requests, the system's passkey sheet
    /// shown by an `ASAuthorizationController`, and its answer turned back into the JSON the
    /// server verifies (every binary field base64url). With `autoFill`, an assertion waits in the
    /// keyboard's suggestions of a field marked `.textContentType(.username)` (iOS 16's
    /// autofill-assisted requests, the app's conditional mediation) instead of a sheet.
    ///
    /// One request at a time: a new one cancels the one waiting (an autofill request, say, when
    /// the person taps "Sign in with a passkey"), which then throws `PasskeyCancelled`.
    public final class PasskeyAuthorization: NSObject, PasskeyCreating, PasskeyAsserting, @unchecked Sendable {
        // Safe to share: the only mutable state, `pending`, is read and written under `lock`;
        // controllers are made, started and cancelled on the main actor only.
        /// Whether assertions wait in the keyboard's autofill suggestions instead of a sheet.
        public let autoFill: Bool
        private let lock = NSLock()
        private var pending: Pending?

        private struct Pending {
            let controller: ASAuthorizationController
            let continuation: CheckedContinuation<Credential, any Error>
        }

        /// What a finished request gave: a new passkey, or an assertion.
        private enum Credential: Sendable {
            case registration(RegistrationCredential)
            case assertion(AuthenticationCredential)
        }

        /// Passkey requests shown as a sheet, or, for assertions with `autoFill`, offered in the
        /// keyboard's suggestions.
        public init(autoFill: Bool = false) {
            self.autoFill = autoFill
        }

        // MARK: PasskeyCreating, PasskeyAsserting

        /// A new passkey for `options` (always a sheet); `PasskeyCancelled` when the person declines.
        public func registration(for options: PasskeyCreationOptions) async throws -> RegistrationCredential {
            guard case .registration(let credential) = try await register(options) else {
                throw PasskeyAuthorizationFailure(description: "the passkey sheet answered with an assertion")
            }
            return credential
        }

        /// An assertion for `options`; `PasskeyCancelled` when the person declines (or another
        /// request took this one's place).
        public func assertion(for options: PasskeyRequestOptions) async throws -> AuthenticationCredential {
            guard case .assertion(let credential) = try await assert(options) else {
                throw PasskeyAuthorizationFailure(description: "the passkey sheet answered with a new passkey")
            }
            return credential
        }

        /// Ends the request waiting, if any (an autofill request when its screen goes away).
        @MainActor
        public func cancel() {
            guard let earlier = take(nil) else { return }
            earlier.continuation.resume(throwing: PasskeyCancelled())
            earlier.controller.cancel()
        }

        // MARK: Requests

        @MainActor
        private func register(_ options: PasskeyCreationOptions) async throws -> Credential {
            let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: options.rp.id)
            let request = provider.createCredentialRegistrationRequest(
                challenge: try Self.bytes(options.challenge, "challenge"), name: options.user.name,
                userID: try Self.bytes(options.user.id, "user ID"))
            request.displayName = options.user.displayName
            request.userVerificationPreference = .init(rawValue: options.authenticatorSelection.userVerification)
            request.attestationPreference = .init(rawValue: options.attestation)
            if #available(iOS 17.4, *) {
                request.excludedCredentials = options.excludeCredentials.compactMap(Self.descriptor)
            }
            return try await perform(request, autoFill: false)
        }

        @MainActor
        private func assert(_ options: PasskeyRequestOptions) async throws -> Credential {
            let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: options.rpId)
            let request = provider.createCredentialAssertionRequest(
                challenge: try Self.bytes(options.challenge, "challenge"))
            // Empty for a passwordless sign-in: the sheet offers every passkey for the RP ID.
            request.allowedCredentials = options.allowCredentials.compactMap(Self.descriptor)
            request.userVerificationPreference = .init(rawValue: options.userVerification)
            return try await perform(request, autoFill: autoFill)
        }

        @MainActor
        private func perform(_ request: ASAuthorizationRequest, autoFill: Bool) async throws -> Credential {
            let controller = ASAuthorizationController(authorizationRequests: [request])
            controller.delegate = self
            controller.presentationContextProvider = self
            // A task cancelled (an autofill request's screen gone) ends its own request only.
            nonisolated(unsafe) let ending = controller
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    if let earlier = take(Pending(controller: controller, continuation: continuation)) {
                        earlier.continuation.resume(throwing: PasskeyCancelled())
                        earlier.controller.cancel()
                    }
                    if autoFill {
                        controller.performAutoFillAssistedRequests()
                    } else {
                        controller.performRequests()
                    }
                }
            } onCancel: {
                Task { @MainActor [self] in
                    finish(ending, .failure(PasskeyCancelled()))
                    ending.cancel()
                }
            }
        }

        /// Puts `next` in the place of the request waiting; the one that was waiting.
        private func take(_ next: Pending?) -> Pending? {
            lock.withLock {
                defer { pending = next }
                return pending
            }
        }

        /// Ends `controller`'s request with `outcome`, unless another request has taken its place.
        private func finish(_ controller: ASAuthorizationController, _ outcome: Result<Credential, any Error>) {
            let finished: Pending? = lock.withLock {
                guard pending?.controller === controller else { return nil }
                defer { pending = nil }
                return pending
            }
            finished?.continuation.resume(with: outcome)
        }

        // MARK: Conversions

        private static func bytes(_ base64url: String, _ what: String) throws -> Data {
            guard let bytes = Base64URL.decode(base64url) else {
                throw PasskeyAuthorizationFailure(description: "the \(what) is not base64url")
            }
            return Data(bytes)
        }

        private static func descriptor(_ passkey: PasskeyDescriptor)
            -> ASAuthorizationPlatformPublicKeyCredentialDescriptor?
        {
            Base64URL.decode(passkey.id).map {
                ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: Data($0))
            }
        }

        private static func attachment(_ attachment: ASAuthorizationPublicKeyCredentialAttachment) -> String {
            attachment == .crossPlatform ? "cross-platform" : "platform"
        }

        /// The system's credential as the WebAuthn JSON the server takes.
        private static func credential(_ credential: any ASAuthorizationCredential) throws -> Credential {
            if let created = credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration {
                guard let attestation = created.rawAttestationObject else {
                    throw PasskeyAuthorizationFailure(description: "the new passkey came without an attestation object")
                }
                let platform = created.attachment == .platform
                let response = RegistrationResponse(
                    clientDataJSON: Base64URL.encode(created.rawClientDataJSON),
                    attestationObject: Base64URL.encode(attestation),
                    transports: platform ? ["hybrid", "internal"] : ["hybrid"])
                return .registration(
                    RegistrationCredential(
                        id: Base64URL.encode(created.credentialID), response: response,
                        authenticatorAttachment: attachment(created.attachment)))
            }
            if let asserted = credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion {
                guard let authenticatorData = asserted.rawAuthenticatorData, let signature = asserted.signature else {
                    throw PasskeyAuthorizationFailure(description: "the assertion came without its data or signature")
                }
                let userHandle = asserted.userID.flatMap { $0.isEmpty ? nil : Base64URL.encode($0) }
                let response = AssertionResponse(
                    clientDataJSON: Base64URL.encode(asserted.rawClientDataJSON),
                    authenticatorData: Base64URL.encode(authenticatorData), signature: Base64URL.encode(signature),
                    userHandle: userHandle)
                return .assertion(
                    AuthenticationCredential(
                        id: Base64URL.encode(asserted.credentialID), response: response,
                        authenticatorAttachment: attachment(asserted.attachment)))
            }
            throw PasskeyAuthorizationFailure(description: "the sheet answered with a credential that is not a passkey")
        }
    }

    extension PasskeyAuthorization: ASAuthorizationControllerDelegate {
        /// The person finished: the credential, converted.
        public func authorizationController(
            controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization
        ) {
            finish(controller, Result { try Self.credential(authorization.credential) })
        }

        /// The sheet ended without a credential: a cancel is `PasskeyCancelled`, the rest as is.
        public func authorizationController(
            controller: ASAuthorizationController, didCompleteWithError error: any Error
        ) {
            let cancelled = (error as? ASAuthorizationError)?.code == .canceled
            finish(controller, .failure(cancelled ? PasskeyCancelled() : error))
        }
    }

    extension PasskeyAuthorization: @preconcurrency ASAuthorizationControllerPresentationContextProviding {
        /// The key window of the app's foreground scene.
        @MainActor
        public func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor {
            let scenes = UIApplication.shared.connectedScenes.compactMap { $0 as? UIWindowScene }
            let active = scenes.filter { $0.activationState == .foregroundActive }
            let windows = (active.isEmpty ? scenes : active).flatMap(\.windows)
            return windows.first(where: \.isKeyWindow) ?? windows.first ?? ASPresentationAnchor()
        }
    }
#endif

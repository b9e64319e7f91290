import Foundation

// Passkeys (WebAuthn Level 3, seed 000). The options are the JSON forms a browser's
// `PublicKeyCredential.parseCreationOptionsFromJSON`/`parseRequestOptionsFromJSON` (and
// @simplewebauthn/browser's `startRegistration`/`startAuthentication`) take; the credentials are
// what `PublicKeyCredential.toJSON()` writes. Binary values are base64url without padding.

/// `{ "type": "public-key", "id": …, "transports": […] }`: a credential named in
/// `excludeCredentials` or `allowCredentials`.
public struct PasskeyDescriptor: Codable, Sendable, Equatable {
    public var type: String
    public var id: String
    public var transports: [String]?

    public init(id: String, transports: [String]?) {
        self.type = "public-key"
        self.id = id
        self.transports = transports
    }
}

/// `POST /2fa/webauthn/register/options`: optional `hints` (`security-key`, `client-device`,
/// `hybrid`), passed through to the options.
public struct PasskeyRegistrationOptionsRequest: Codable, Sendable {
    public var hints: [String]?
    public init(hints: [String]? = nil) { self.hints = hints }
}

/// `PublicKeyCredentialCreationOptionsJSON`: what the browser needs to create a passkey.
public struct PasskeyCreationOptions: Codable, Sendable {
    public struct RelyingParty: Codable, Sendable, Equatable {
        public var id: String
        public var name: String
        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    public struct User: Codable, Sendable, Equatable {
        /// The user handle: base64url of 16 bytes that name the account and nothing else.
        public var id: String
        public var name: String
        public var displayName: String
        public init(id: String, name: String, displayName: String) {
            self.id = id
            self.name = name
            self.displayName = displayName
        }
    }

    public struct Parameter: Codable, Sendable, Equatable {
        public var type: String
        /// A COSE algorithm: -7 ES256, -8 EdDSA, -35 ES384, -36 ES512, -37 PS256, -257 RS256.
        public var alg: Int
        public init(alg: Int) {
            self.type = "public-key"
            self.alg = alg
        }
    }

    public struct Selection: Codable, Sendable, Equatable {
        public var residentKey: String
        public var requireResidentKey: Bool
        public var userVerification: String
        /// A discoverable credential preferred, so the passkey can sign in without a username.
        public init(userVerification: String) {
            self.residentKey = "preferred"
            self.requireResidentKey = false
            self.userVerification = userVerification
        }
    }

    public struct Extensions: Codable, Sendable, Equatable {
        public var credProps: Bool
    }

    public var rp: RelyingParty
    public var user: User
    /// base64url of 32 random bytes, valid for `timeout` milliseconds and once.
    public var challenge: String
    public var pubKeyCredParams: [Parameter]
    public var timeout: Int
    public var excludeCredentials: [PasskeyDescriptor]
    public var authenticatorSelection: Selection
    /// `none` (the default), `indirect`, `direct` or `enterprise`.
    public var attestation: String
    public var hints: [String]?
    public var extensions: Extensions

    public init(
        rp: RelyingParty, user: User, challenge: String, pubKeyCredParams: [Parameter], timeout: Int,
        excludeCredentials: [PasskeyDescriptor], authenticatorSelection: Selection, attestation: String,
        hints: [String]?
    ) {
        self.rp = rp
        self.user = user
        self.challenge = challenge
        self.pubKeyCredParams = pubKeyCredParams
        self.timeout = timeout
        self.excludeCredentials = excludeCredentials
        self.authenticatorSelection = authenticatorSelection
        self.attestation = attestation
        self.hints = hints
        self.extensions = Extensions(credProps: true)
    }
}

/// A `PublicKeyCredential` as its `toJSON()` writes it: the browser's answer to
/// `navigator.credentials.create()` (`RegistrationCredential`) or `.get()`
/// (`AuthenticationCredential`).
public struct PublicKeyCredentialJSON<Response: Codable & Sendable>: Codable, Sendable {
    public var id: String
    public var rawId: String?
    public var type: String
    public var response: Response
    public var authenticatorAttachment: String?

    public init(id: String, response: Response, authenticatorAttachment: String? = nil) {
        self.id = id
        self.rawId = id
        self.type = "public-key"
        self.response = response
        self.authenticatorAttachment = authenticatorAttachment
    }
}

/// `AuthenticatorAttestationResponseJSON`: what a new credential answers.
public struct RegistrationResponse: Codable, Sendable {
    public var clientDataJSON: String
    public var attestationObject: String
    public var transports: [String]?

    public init(clientDataJSON: String, attestationObject: String, transports: [String]? = nil) {
        self.clientDataJSON = clientDataJSON
        self.attestationObject = attestationObject
        self.transports = transports
    }
}

/// `RegistrationResponseJSON`.
public typealias RegistrationCredential = PublicKeyCredentialJSON<RegistrationResponse>

/// `POST /2fa/webauthn/register/verify`: the new credential, and optionally its name.
public struct PasskeyRegistrationRequest: Codable, Sendable {
    public var credential: RegistrationCredential
    /// Up to 64 characters; "Passkey" and the provider's name when absent.
    public var name: String?
    /// The browser created it on its own after a password sign-in (`mediation: "conditional"`,
    /// an automatic passkey upgrade): user presence is not asked for.
    public var automaticUpgrade: Bool?

    public init(credential: RegistrationCredential, name: String? = nil, automaticUpgrade: Bool? = nil) {
        self.credential = credential
        self.name = name
        self.automaticUpgrade = automaticUpgrade
    }
}

/// A registered passkey as its owner sees it (`GET /2fa/passkey/credentials`).
public struct PasskeyDTO: Codable, Sendable, Equatable {
    /// The credential ID, base64url: what `PATCH`/`DELETE …/credentials/{id}` take.
    public var id: String
    public var name: String
    public var createdAt: Date
    public var lastUsedAt: Date?
    public var transports: [String]
    /// Backed up to a provider's cloud (the BS flag at its latest use): "Synced".
    public var synced: Bool
    /// Cannot be backed up (BE clear): "This device only".
    public var deviceBound: Bool
    /// The provider's name from the credential's AAGUID ("iCloud Keychain", "YubiKey 5 Series"),
    /// when it is known.
    public var provider: String?
    /// The authenticator model's AAGUID (all zeros when the authenticator does not say).
    public var aaguid: String
    /// The attestation format and what it showed: `none`, `self`, `verified` or `unverified`.
    public var attestationFormat: String
    public var attestation: String

    public init(
        id: String, name: String, createdAt: Date, lastUsedAt: Date?, transports: [String], synced: Bool,
        deviceBound: Bool, provider: String?, aaguid: String, attestationFormat: String, attestation: String
    ) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.transports = transports
        self.synced = synced
        self.deviceBound = deviceBound
        self.provider = provider
        self.aaguid = aaguid
        self.attestationFormat = attestationFormat
        self.attestation = attestation
    }

    enum CodingKeys: String, CodingKey {
        case id, name, createdAt, lastUsedAt, transports, synced, deviceBound, provider, aaguid, attestationFormat
        case attestation
    }

    /// `lastUsedAt` and `provider` are written as `null` when unset.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(lastUsedAt, forKey: .lastUsedAt)
        try container.encode(transports, forKey: .transports)
        try container.encode(synced, forKey: .synced)
        try container.encode(deviceBound, forKey: .deviceBound)
        try container.encode(provider, forKey: .provider)
        try container.encode(aaguid, forKey: .aaguid)
        try container.encode(attestationFormat, forKey: .attestationFormat)
        try container.encode(attestation, forKey: .attestation)
    }
}

/// The answer of `POST /2fa/webauthn/register/verify`: the passkey, and the backup codes when it
/// is the account's first second factor (shown once).
public struct PasskeyRegisteredResponse: Codable, Sendable {
    public var credential: PasskeyDTO
    public var backupCodes: [String]?
    public var serverTime: Date

    public init(credential: PasskeyDTO, backupCodes: [String]?, serverTime: Date) {
        self.credential = credential
        self.backupCodes = backupCodes
        self.serverTime = serverTime
    }
}

/// `GET /2fa/passkey/credentials`.
public struct PasskeysResponse: Codable, Sendable {
    public var credentials: [PasskeyDTO]
    public init(credentials: [PasskeyDTO]) { self.credentials = credentials }
}

/// `PATCH /2fa/passkey/credentials/{id}`.
public struct PasskeyRenameRequest: Codable, Sendable {
    public var name: String
    public init(name: String) { self.name = name }
}

/// `POST /2fa/passkey/authenticate/options`: the login flow a passkey completes.
public struct PasskeyFlowOptionsRequest: Codable, Sendable {
    public var otpFlowId: String?
    public var tempToken: String?

    public init(otpFlowId: String? = nil, tempToken: String? = nil) {
        self.otpFlowId = otpFlowId
        self.tempToken = tempToken
    }
}

/// `PublicKeyCredentialRequestOptionsJSON`: what the browser needs to sign in with a passkey.
public struct PasskeyRequestOptions: Codable, Sendable {
    /// base64url of 32 random bytes, valid for `timeout` milliseconds and once.
    public var challenge: String
    public var timeout: Int
    public var rpId: String
    /// The user's passkeys; empty for a passwordless sign-in (the browser offers the
    /// discoverable ones it holds for this RP ID).
    public var allowCredentials: [PasskeyDescriptor]
    public var userVerification: String
    public var hints: [String]?

    public init(
        challenge: String, timeout: Int, rpId: String, allowCredentials: [PasskeyDescriptor],
        userVerification: String, hints: [String]? = nil
    ) {
        self.challenge = challenge
        self.timeout = timeout
        self.rpId = rpId
        self.allowCredentials = allowCredentials
        self.userVerification = userVerification
        self.hints = hints
    }
}

/// `AuthenticatorAssertionResponseJSON`: what an assertion answers.
public struct AssertionResponse: Codable, Sendable {
    public var clientDataJSON: String
    public var authenticatorData: String
    public var signature: String
    /// The user handle the passkey was created with; required for a passwordless sign-in.
    public var userHandle: String?

    public init(clientDataJSON: String, authenticatorData: String, signature: String, userHandle: String? = nil) {
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
    }
}

/// `AuthenticationResponseJSON`.
public typealias AuthenticationCredential = PublicKeyCredentialJSON<AssertionResponse>

/// `POST /2fa/passkey/authenticate/verify`: a passkey as the second step of a login flow.
public struct PasskeyFlowVerifyRequest: Codable, Sendable {
    public var otpFlowId: String?
    public var tempToken: String?
    public var credential: AuthenticationCredential
    /// Remember this device for 30 days (seed 002).
    public var trustDevice: Bool?

    public init(
        otpFlowId: String? = nil, tempToken: String? = nil, credential: AuthenticationCredential,
        trustDevice: Bool? = nil
    ) {
        self.otpFlowId = otpFlowId
        self.tempToken = tempToken
        self.credential = credential
        self.trustDevice = trustDevice
    }
}

/// `POST /passkey/authenticate/verify`: a passwordless sign-in.
public struct PasskeySignInRequest: Codable, Sendable {
    public var credential: AuthenticationCredential
    public init(credential: AuthenticationCredential) { self.credential = credential }
}

/// `GET /.well-known/webauthn`: the origins that may use this server's RP ID (WebAuthn Level 3
/// related origin requests).
public struct RelatedOrigins: Codable, Sendable, Equatable {
    public var origins: [String]
    public init(origins: [String]) { self.origins = origins }
}

/// `GET /.well-known/apple-app-site-association`: the iOS apps (`<team ID>.<bundle ID>`) this
/// server vouches for, as Apple's associated domains read it: their passkeys for this domain
/// (`webcredentials`) and the links of this server that open in them rather than in a browser
/// (`applinks`: the recovery email's link).
public struct AppleAppSiteAssociation: Codable, Sendable, Equatable {
    /// The links that open in the apps.
    public struct AppLinks: Codable, Sendable, Equatable {
        /// Which apps open which paths.
        public struct Detail: Codable, Sendable, Equatable {
            public var appIDs: [String]
            public var components: [Component]
            public init(appIDs: [String], components: [Component]) {
                (self.appIDs, self.components) = (appIDs, components)
            }
        }

        /// A path (`/`), the query items it must carry (`?`, each `?*`: any non-empty value).
        public struct Component: Codable, Sendable, Equatable {
            public var path: String
            public var query: [String: String]?
            public var comment: String?
            public init(path: String, query: [String: String]? = nil, comment: String? = nil) {
                (self.path, self.query, self.comment) = (path, query, comment)
            }
            enum CodingKeys: String, CodingKey {
                case path = "/"
                case query = "?"
                case comment
            }
        }

        public var details: [Detail]
        public init(details: [Detail]) { self.details = details }
    }

    /// The apps whose passkeys are this domain's.
    public struct WebCredentials: Codable, Sendable, Equatable {
        public var apps: [String]
        public init(apps: [String]) { self.apps = apps }
    }

    public var applinks: AppLinks
    public var webcredentials: WebCredentials

    public init(applinks: AppLinks, webcredentials: WebCredentials) {
        (self.applinks, self.webcredentials) = (applinks, webcredentials)
    }

    /// What a server vouches for `apps`: their passkeys, and the recovery pass page (`path`,
    /// with its `token`) opening in them.
    public init(apps: [String], recoveryPath: String) {
        self.init(
            applinks: AppLinks(details: [
                AppLinks.Detail(
                    appIDs: apps,
                    components: [
                        AppLinks.Component(
                            path: recoveryPath, query: ["token": "?*"], comment: "The recovery email's link")
                    ])
            ]),
            webcredentials: WebCredentials(apps: apps))
    }
}

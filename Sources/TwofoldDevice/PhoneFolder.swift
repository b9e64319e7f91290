import Crypto
import Foundation
import TwofoldClient
import WebAuthn

/// A virtual phone kept in a folder between runs (the command-line tool's `$TWOFOLD_HOME`):
/// its device ID, its switches and keys (`VirtualPhone`) and its passkeys
/// (`VirtualAuthenticator`), in one JSON file only its owner may read (0600), since it holds
/// private keys. A file another user could read is refused, not used.
public struct PhoneFolder: Sendable {
    /// The phone's JSON file (`phone.json` in the folder).
    public let file: URL

    /// The phone's file in `folder`.
    public init(folder: URL) {
        file = folder.appendingPathComponent("phone.json")
    }

    /// What the file holds.
    public struct Phone: Codable, Sendable {
        /// The device's identifier, made once (as `identifierForVendor` is on an iPhone).
        public var deviceID: String
        /// The phone's security switches.
        public var state: DeviceCapabilities
        /// Whether biometrics are locked out.
        public var biometryLockedOut: Bool
        /// Device keys by tag.
        public var keys: [String: Key]
        /// The passkeys of the phone's authenticator.
        public var passkeys: [Passkey]

        /// A device key as kept: its private key and what guards it.
        public struct Key: Codable, Sendable {
            /// The P-256 private key's raw representation.
            public var privateKey: Data
            /// What guards the key.
            public var protection: KeyProtection
        }

        /// A `SoftwarePasskey`, every field of it.
        public struct Passkey: Codable, Sendable {
            /// The P-256 private key's raw representation.
            public var privateKey: Data
            /// The credential ID's bytes.
            public var credentialID: Data
            /// The relying party the passkey is for.
            public var rpID: String
            /// The page its ceremonies come from.
            public var origin: String
            /// The authenticator data's flags, as their raw byte.
            public var flags: UInt8
            /// The signature counter.
            public var signCount: UInt32
            /// The attestation format: `none` or `packed`.
            public var format: String
            /// The user handle the passkey was made for.
            public var userHandle: Data?
            /// The authenticator model's AAGUID.
            public var aaguid: Data

            /// The fields of `passkey`, to keep.
            public init(_ passkey: SoftwarePasskey) {
                privateKey = passkey.key.rawRepresentation
                credentialID = Data(passkey.credentialID)
                rpID = passkey.rpID
                origin = passkey.origin
                flags = passkey.flags.rawValue
                signCount = passkey.signCount
                format = passkey.format
                userHandle = passkey.userHandle.map { Data($0) }
                aaguid = Data(passkey.aaguid)
            }

            /// The `SoftwarePasskey` these fields describe; throws when the private key is not a P-256 key.
            public func passkey() throws -> SoftwarePasskey {
                SoftwarePasskey(
                    rpID: rpID, origin: origin, credentialID: Array(credentialID),
                    flags: AuthenticatorData.Flags(rawValue: flags), signCount: signCount, format: format,
                    userHandle: userHandle.map { Array($0) }, aaguid: Array(aaguid),
                    key: try P256.Signing.PrivateKey(rawRepresentation: privateKey))
            }
        }
    }

    /// Why the phone's file could not be used.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// The file may be read by others than its owner: its keys are not to be trusted.
        case notPrivate(String)
        /// The file is not a virtual phone's JSON.
        case unreadable(String)
        /// The phone could not be encoded for the file.
        case unwritable(String)

        /// What went wrong, naming the file.
        public var description: String {
            switch self {
            case .notPrivate(let path): "\(path) may be read by other users; remove it or make it 0600"
            case .unreadable(let path): "\(path) is not a virtual phone's file"
            case .unwritable(let path): "cannot write \(path)"
            }
        }
    }

    /// The phone kept here, or a new one (Face ID enrolled and a passcode, a new device ID) when
    /// there is none yet.
    public func load() throws -> Phone {
        guard FileManager.default.fileExists(atPath: file.path) else {
            return Phone(
                deviceID: UUID().uuidString.lowercased(),
                state: .faceID,
                biometryLockedOut: false, keys: [:], passkeys: [])
        }
        let data: Data?
        do {
            data = try PrivateFile(file).read()
        } catch is PrivateFile.NotPrivate {
            throw Failure.notPrivate(file.path)
        }
        guard let data, let phone = try? JSONDecoder().decode(Phone.self, from: data) else {
            throw Failure.unreadable(file.path)
        }
        return phone
    }

    /// Writes `phone` in place of what was kept, owner-only from its first byte (`PrivateFile`).
    public func save(_ phone: Phone) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            try PrivateFile(file).write(try encoder.encode(phone))
        } catch is EncodingError {
            throw Failure.unwritable(file.path)
        }
    }

    /// The phone and its passkey authenticator for pages of `origin`, as kept here.
    public func open(origin: String) async throws -> (
        deviceID: String, phone: VirtualPhone, passkeys: VirtualAuthenticator
    ) {
        let kept = try load()
        let phone = try VirtualPhone(kept)
        let passkeys = VirtualAuthenticator(origin: origin, passkeys: try kept.passkeys.map { try $0.passkey() })
        return (kept.deviceID, phone, passkeys)
    }

    /// Keeps `phone` and `passkeys` as they are now, under `deviceID`.
    public func keep(deviceID: String, phone: VirtualPhone, passkeys: VirtualAuthenticator) async throws {
        try await save(
            Phone(
                deviceID: deviceID, state: phone.state, biometryLockedOut: phone.biometryLockedOut,
                keys: phone.savedKeys(), passkeys: passkeys.passkeys.map(Phone.Passkey.init)))
    }
}

/// Passkey providers by AAGUID: a snapshot of the community list
/// (passkeydeveloper/passkey-authenticator-aaguids, `combined.json`), taken 2026-11-24, of the
/// providers people meet most. An AAGUID not here (or all zeros, which many authenticators send
/// without attestation) has no provider name; the passkey is listed by the name it was given.
enum PasskeyProviders {
    static let names: [String: String] = [
        "bada5566-a7aa-401f-bd96-45619a55120d": "1Password",
        "d548826e-79b4-db40-a3d8-11116f7e8349": "Bitwarden",
        "adce0002-35bc-c60a-648b-0b25f1f05503": "Chrome on Mac",
        "b5397666-4885-aa6b-cebf-e52262a439a2": "Chromium Browser",
        "531126d6-e717-415c-9320-3d9aa6981239": "Dashlane",
        "771b48fd-d3d4-4f74-9232-fc157ab0507a": "Edge on Mac",
        "f3809540-7f14-49c1-a8b3-8f813b225541": "Enpass",
        "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4": "Google Password Manager",
        "42b4fb4a-2866-43b2-9bf7-6c6669c2e5d3": "Google Titan Security Key v2",
        "fbfc3007-154e-4ecc-8c0b-6e020557d7bd": "iCloud Keychain",
        "dd4ec289-e01d-41c9-bb89-70fa845d4bf2": "iCloud Keychain (Managed)",
        "fdb141b2-5d84-443e-8a35-4698c205a502": "KeePassXC",
        "0ea242b4-43c4-4a1b-8b17-dd6d0b6baec6": "Keeper",
        "b78a0a55-6ef8-d246-a042-ba0f6d55050c": "LastPass",
        "de1e552d-db1d-4423-a619-566b625cdc84": "Microsoft Authenticator for Android",
        "90a3ccdf-635c-4729-a248-9b709135078f": "Microsoft Authenticator for iOS",
        "b84e4048-15dc-4dd0-8640-f4f60813c8af": "NordPass",
        "50726f74-6f6e-5061-7373-50726f746f6e": "Proton Pass",
        "53414d53-554e-4700-0000-000000000000": "Samsung Pass",
        "08987058-cadc-4b81-b6e1-30de50dcbe96": "Windows Hello",
        "9ddd1817-af5a-4672-a2b9-3e3dd95000a9": "Windows Hello",
        "ee882879-721c-4913-9775-3dfcce97072a": "YubiKey 5 Series",
        "19083c3d-8383-4b18-bc03-8f1c9ab2fd1b": "YubiKey 5 Series",
        "2cd2f727-f6ca-44da-8f48-5c2e5da000a2": "Nitrokey 3 AM",
        "b92c3f9a-c014-4056-887f-140a2501163b": "Security Key by Yubico",
        "f8a011f3-8c0a-4d15-8006-17111f9edc7d": "Security Key by Yubico",
        "149a2021-8ef6-4133-96b8-81f8d5b7f1f5": "Security Key by Yubico with NFC",
        "e77e3c64-05e3-428b-8824-0cbeb04b829d": "Security Key NFC by Yubico",
        "a4e9fc6d-4cbe-4758-b8ba-37598bb5bbaa": "Security Key NFC by Yubico",
    ]

    /// The provider's name for `aaguid` (a lowercase UUID string), when it is known.
    static func name(aaguid: String) -> String? { names[aaguid.lowercased()] }
}

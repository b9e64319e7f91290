import Crypto
import Foundation
import Testing
import TwofoldCore
import TwofoldTestSupport

@Suite struct DeviceKeyTests {
    let privateKey = P256.Signing.PrivateKey()
    let challenge = Data((0..<32).map { UInt8($0) })

    @Test func acceptsDERSignaturesLikeiOSProduces() throws {
        let key = try DevicePublicKey(base64: privateKey.publicKey.x963Representation.base64EncodedString())
        let der = try privateKey.signature(for: challenge).derRepresentation
        #expect(key.isValidSignature(try DeviceSignature(base64: der.base64EncodedString()), for: challenge))
    }

    @Test func acceptsRaw64ByteSignatures() throws {
        let key = try DevicePublicKey(x963: privateKey.publicKey.x963Representation)
        let raw = try privateKey.signature(for: challenge).rawRepresentation
        #expect(raw.count == 64)
        #expect(key.isValidSignature(try DeviceSignature(bytes: raw), for: challenge))
    }

    @Test func refusesSignaturesOverOtherDataOrByOtherKeys() throws {
        let key = try DevicePublicKey(x963: privateKey.publicKey.x963Representation)
        let signature = try DeviceSignature(bytes: try privateKey.signature(for: challenge).derRepresentation)
        #expect(!key.isValidSignature(signature, for: challenge.dropFirst()))
        let other = try DevicePublicKey(x963: P256.Signing.PrivateKey().publicKey.x963Representation)
        #expect(!other.isValidSignature(signature, for: challenge))
    }

    @Test func keysRoundTripThroughBase64() throws {
        let text = privateKey.publicKey.x963Representation.base64EncodedString()
        #expect(try DevicePublicKey(base64: text).base64 == text)
    }

    @Test func malformedKeysAreRefusedWithAReason() throws {
        let x963 = privateKey.publicKey.x963Representation
        var offCurve = x963
        offCurve[64] ^= 0x01
        let cases: [(String, String)] = [
            ("not base64!", "not valid base64"),
            ("", "not 0"),
            (Data(x963.prefix(64)).base64EncodedString(), "not 64"),
            (privateKey.publicKey.compressedRepresentation.base64EncodedString(), "not 33"),
            (Data([0x05] + x963.dropFirst()).base64EncodedString(), "uncompressed point"),
            (offCurve.base64EncodedString(), "not a point on the P-256 curve"),
            (P384.Signing.PrivateKey().publicKey.x963Representation.base64EncodedString(), "not 97"),
        ]
        for (input, reason) in cases {
            do {
                _ = try DevicePublicKey(base64: input)
                Issue.record("accepted \(input)")
            } catch {
                #expect(error.description.contains(reason), "\(error.description)")
            }
        }
    }

    @Test func malformedSignaturesAreRefused() {
        for bytes in [
            Data(), Data([0x30]), Data([0x30, 0x02, 0x02, 0x00]), Data(repeating: 0, count: 63),
            Data(repeating: 0xFF, count: 80),
        ] {
            #expect(throws: DeviceKeyError.self) { try DeviceSignature(bytes: bytes) }
        }
        #expect(throws: DeviceKeyError.self) { try DeviceSignature(base64: "%%%") }
    }

    @Test func randomBytesNeverTrap() {
        var rng = SplitMix64(seed: 0xEC)
        for _ in 0..<3_000 {
            let length = Int(rng.next() % 100)
            var bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) })
            if rng.next() % 2 == 0, !bytes.isEmpty { bytes[0] = rng.next() % 2 == 0 ? 0x04 : 0x30 }
            _ = try? DevicePublicKey(x963: bytes)
            _ = try? DeviceSignature(bytes: bytes)
            _ = try? DevicePublicKey(base64: String(decoding: bytes, as: UTF8.self))
        }
    }
}

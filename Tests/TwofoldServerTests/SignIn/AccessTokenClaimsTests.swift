import Foundation
import JWTKit
import Testing
import TwofoldAPI

@testable import TwofoldServer

/// The access token's claims, written without JSONEncoder, read back as the Codable form reads
/// them (JWTKit, and so every verifier, decodes this JSON).
struct AccessTokenClaimsTests {
    static func claims(amr: [String]) -> AccessTokenClaims {
        AccessTokenClaims(
            sub: .init(value: UUID().uuidString), sid: UUID().uuidString, amr: amr, authTime: 1_800_000_000,
            iat: .init(value: Date(timeIntervalSince1970: 1_800_000_017)),
            exp: .init(value: Date(timeIntervalSince1970: 1_800_000_917)), iss: .init(value: AccessTokenClaims.issuer))
    }

    static func decode(_ json: String) throws -> AccessTokenClaims {
        try Wire.tokenClaimsDecoder().decode(AccessTokenClaims.self, from: Data(json.utf8))
    }

    @Test func readsBackAsTheClaimsItWasWrittenFrom() throws {
        let claims = Self.claims(amr: ["pwd", "otp", "mfa"])
        #expect(try Self.decode(claims.json) == claims)
        #expect(claims.json.hasPrefix(#"{"sub":""#) && claims.json.contains(#""auth_time":1800000000,"#))
    }

    @Test func escapesWhatJSONStringsMustEscape() throws {
        for amr in [[], [""], ["quote\"", "back\\slash", "line\nfeed", "tab\t", "\u{01}\u{1F}", "é✓😀"]] {
            let claims = Self.claims(amr: amr)
            #expect(try Self.decode(claims.json) == claims, "\(amr)")
            #expect(try JSONSerialization.jsonObject(with: Data(claims.json.utf8)) is [String: Any])
        }
    }
}

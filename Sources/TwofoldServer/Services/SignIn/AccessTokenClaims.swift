import Foundation
import JWTKit

/// The claims of a Twofold access token (API.md: `sub`, `sid`, `amr`, `auth_time`, 15 minutes).
struct AccessTokenClaims: JWTPayload, Equatable {
    var sub: SubjectClaim
    /// The session the token was issued from; revoking it stops the token at once.
    var sid: String
    /// RFC 8176 authentication method references.
    var amr: [String]
    /// When the user last proved a factor (seconds since 1970).
    var authTime: Int
    var iat: IssuedAtClaim
    var exp: ExpirationClaim
    var iss: IssuerClaim

    static let issuer = "twofold"

    enum CodingKeys: String, CodingKey {
        case sub, sid, amr, iat, exp, iss
        case authTime = "auth_time"
    }

    /// The claims as compact JSON, written directly: every sign-in signs one, and JSONEncoder
    /// costs several times as much. The members and values of the Codable form (NumericDates in
    /// whole seconds, as `TokenService.issue` makes them).
    var json: String {
        var json = #"{"sub":"#
        json.appendJSONString(sub.value)
        json += #","sid":"#
        json.appendJSONString(sid)
        json += #","amr":["#
        for (index, method) in amr.enumerated() {
            if index > 0 { json += "," }
            json.appendJSONString(method)
        }
        json += #"],"auth_time":\#(authTime),"iat":\#(Int(iat.value.timeIntervalSince1970))"#
        json += #","exp":\#(Int(exp.value.timeIntervalSince1970)),"iss":"#
        json.appendJSONString(iss.value)
        return json + "}"
    }

    /// Expiry is checked by `TokenService` against the server's injected clock, not here.
    func verify(using algorithm: some JWTAlgorithm) async throws {
        guard iss.value == Self.issuer else {
            throw JWTError.claimVerificationFailure(failedClaim: iss, reason: "issuer")
        }
    }
}

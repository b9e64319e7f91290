import Crypto
import Foundation
import Testing
import TwofoldCore

@testable import TwofoldServer

/// Issue T: an access token is read once, by a parser that refuses a member written twice; the
/// `kid` that picks the key also bounds a retired one; `iat` in the future is refused; a retired
/// key leaves memory with its last token.
struct TokenServiceTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func b64(_ text: String) -> String { Base64URL.encode(Data(text.utf8)) }

    /// A compact JWS of `header` and `payload`, signed with `key`.
    static func token(_ header: String, _ payload: String, key: P256.Signing.PrivateKey) throws -> String {
        let input = b64(header) + "." + b64(payload)
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    static func claims(iat: Date, exp: Date? = nil) -> String {
        let exp = exp ?? iat.addingTimeInterval(900)
        return
            #"{"sub":"\#(UUID().uuidString)","sid":"\#(UUID().uuidString)","amr":["pwd"],"auth_time":\#(Int(iat.timeIntervalSince1970)),"iat":\#(Int(iat.timeIntervalSince1970)),"exp":\#(Int(exp.timeIntervalSince1970)),"iss":"twofold"}"#
    }

    @Test func theServersOwnTokensVerify() async throws {
        let service = try await TokenService(current: P256.Signing.PrivateKey(), retired: [])
        let issued = try service.issue(
            userID: UUID(), sessionID: UUID(), methods: ["pwd"], authTime: Self.now, now: Self.now)
        #expect(await service.verify(issued.token, now: Self.now.addingTimeInterval(60)) != nil)
        #expect(await service.verify(issued.token, now: Self.now.addingTimeInterval(900)) == nil, "expired")
        var tampered = issued.token
        tampered.removeLast()
        tampered.append(issued.token.last == "A" ? "B" : "A")
        #expect(await service.verify(tampered, now: Self.now) == nil)
    }

    /// `TWOFOLD_ACCESS_TOKEN_SECONDS`: tokens live as long as configured, and none that claims
    /// to live longer verifies (a token issued under a longer setting is refreshed).
    @Test func theLifetimeIsTheConfiguredOne() async throws {
        let current = P256.Signing.PrivateKey()
        let service = try await TokenService(current: current, retired: [], lifetime: 120)
        let issued = try service.issue(
            userID: UUID(), sessionID: UUID(), methods: ["pwd"], authTime: Self.now, now: Self.now)
        #expect(issued.expiresAt == Self.now.addingTimeInterval(120))
        #expect(await service.verify(issued.token, now: Self.now.addingTimeInterval(119)) != nil)
        #expect(await service.verify(issued.token, now: Self.now.addingTimeInterval(120)) == nil)
        let longer = try Self.token(
            #"{"alg":"ES256","kid":"\#(service.currentKeyID)"}"#, Self.claims(iat: Self.now), key: current)
        #expect(await service.verify(longer, now: Self.now.addingTimeInterval(10)) == nil, "900 s > 120 s")
    }

    @Test func aHeaderOrClaimsNamingAMemberTwiceAreRefused() async throws {
        let current = P256.Signing.PrivateKey()
        let service = try await TokenService(current: current, retired: [])
        let kid = service.currentKeyID
        let good = try Self.token(#"{"alg":"ES256","kid":"\#(kid)"}"#, Self.claims(iat: Self.now), key: current)
        #expect(await service.verify(good, now: Self.now) != nil, "the same token, written once")
        for header in [
            #"{"alg":"ES256","kid":"\#(kid)","kid":"\#(kid)"}"#, #"{"alg":"ES256","kid":"other","kid":"\#(kid)"}"#,
            #"{"alg":"ES256","\u006bid":"other","kid":"\#(kid)"}"#, #"{"alg":"none","alg":"ES256","kid":"\#(kid)"}"#,
        ] {
            let token = try Self.token(header, Self.claims(iat: Self.now), key: current)
            #expect(await service.verify(token, now: Self.now) == nil, "\(header)")
        }
        let twoSubjects = Self.claims(iat: Self.now).replacingOccurrences(of: #"{"sub""#, with: #"{"sub":"x","sub""#)
        #expect(
            await service.verify(
                try Self.token(#"{"alg":"ES256","kid":"\#(kid)"}"#, twoSubjects, key: current), now: Self.now) == nil)
        for header in [#"{"alg":"HS256","kid":"\#(kid)"}"#, #"{"alg":"ES256"}"#, #"{"alg":"ES256","kid":"nope"}"#] {
            let token = try Self.token(header, Self.claims(iat: Self.now), key: current)
            #expect(await service.verify(token, now: Self.now) == nil, "\(header)")
        }
    }

    @Test func anIssuedAtInTheFutureIsRefused() async throws {
        let current = P256.Signing.PrivateKey()
        let service = try await TokenService(current: current, retired: [])
        let header = #"{"alg":"ES256","kid":"\#(service.currentKeyID)"}"#
        let future = try Self.token(header, Self.claims(iat: Self.now.addingTimeInterval(120)), key: current)
        #expect(await service.verify(future, now: Self.now) == nil)
        #expect(await service.verify(future, now: Self.now.addingTimeInterval(120)) != nil, "once it is not")
        let tooLong = try Self.token(
            header, Self.claims(iat: Self.now, exp: Self.now.addingTimeInterval(901)), key: current)
        #expect(await service.verify(tooLong, now: Self.now) == nil, "longer than an access token lives")
    }

    /// The retired key (whose private half leaked, say) verifies only what it signed before it
    /// retired, whatever else the header says, and leaves memory with its last token.
    @Test func aRetiredKeyIsBoundedByItsOwnKidAndLeavesMemory() async throws {
        let old = P256.Signing.PrivateKey()
        let retiredAt = Self.now
        let service = try await TokenService(
            current: P256.Signing.PrivateKey(), retired: [RetiredSigningKey(key: old.publicKey, retiredAt: retiredAt)])
        let oldKid = TokenService.keyID(for: old.publicKey)
        let before = try Self.token(
            #"{"alg":"ES256","kid":"\#(oldKid)"}"#, Self.claims(iat: retiredAt.addingTimeInterval(-60)), key: old)
        #expect(await service.verify(before, now: retiredAt.addingTimeInterval(60)) != nil)
        let after = Self.claims(iat: retiredAt.addingTimeInterval(30))
        for header in [
            #"{"alg":"ES256","kid":"\#(oldKid)"}"#,
            #"{"alg":"ES256","kid":"\#(oldKid)","kid":"\#(service.currentKeyID)"}"#,
            #"{"alg":"ES256","kid":"\#(service.currentKeyID)","kid":"\#(oldKid)"}"#,
        ] {
            let token = try Self.token(header, after, key: old)
            #expect(await service.verify(token, now: retiredAt.addingTimeInterval(60)) == nil, "\(header)")
        }
        #expect(service.retiredKeyIDs(at: retiredAt.addingTimeInterval(899)) == [oldKid])
        #expect(service.retiredKeyIDs(at: retiredAt.addingTimeInterval(900)).isEmpty, "its last token has expired")
        #expect(await service.verify(before, now: retiredAt.addingTimeInterval(60)) == nil, "and it is gone")
        #expect(service.jwks(now: retiredAt.addingTimeInterval(60)).keys.count == 1)
    }
}

import Foundation
import Testing
import TwofoldAPI

@testable import TwofoldServer

/// The second step's answer, written without JSONEncoder, is what JSONEncoder writes for it.
@Suite(.tags(.database))
struct JSONTextTests {
    static func answer(
        phone: String?, remaining: Int?, deviceToken: String?, name: String = "alice", now: Date,
        passkey: String? = nil
    ) -> SecondStepResponse {
        let user = UserDTO(
            id: UUID(), username: name, email: "\(name)@example.com", phoneNumber: phone, role: "user",
            status: "active", createdAt: now.addingTimeInterval(-86_400 * 400.37))
        return SecondStepResponse(
            tokens: AuthTokensResponse(
                accessToken: TokenDTO(token: "eyJ.a-b_c.d", expiresAt: now.addingTimeInterval(900)),
                refreshToken: TokenDTO(token: "r3fr/sh+", expiresAt: now.addingTimeInterval(30 * 86_400)),
                user: user, passkeyName: passkey),
            backupCodesRemaining: remaining, backupCodesLow: remaining.map { $0 <= 3 },
            trustedDeviceToken: deviceToken, serverTime: now)
    }

    static func encoded(_ answer: SecondStepResponse) throws -> String {
        String(decoding: try Wire.encoder().encode(answer), as: UTF8.self)
    }

    @Test func writesWhatJSONEncoderWrites() throws {
        let times = [
            1_800_000_000.999, 951_782_400.5,  // 2000-02-29, a leap day
            4_107_542_399, 0, 1_709_164_800, 1_795_910_400.25,
        ].map(Date.init(timeIntervalSince1970:))
        for now in times {
            for answer in [
                Self.answer(phone: nil, remaining: nil, deviceToken: nil, now: now),
                Self.answer(phone: "+15551234567", remaining: 3, deviceToken: "device-token", now: now),
                Self.answer(phone: nil, remaining: 0, deviceToken: nil, now: now),
                Self.answer(phone: nil, remaining: nil, deviceToken: nil, now: now, passkey: "Work \"laptop\" ⌘/é"),
            ] {
                #expect(answer.json == (try Self.encoded(answer)), "\(now)")
            }
        }
    }

    @Test func escapesWhatJSONStringsMustEscape() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for name in ["quote\"", "back\\slash", "line\nfeed\r\t", "\u{01}\u{1F}", "é✓😀", "a/b"] {
            let answer = Self.answer(phone: nil, remaining: 9, deviceToken: nil, name: name, now: now)
            let decoder = Wire.decoder()
            let read = try decoder.decode(SecondStepResponse.self, from: Data(answer.json.utf8))
            #expect(read.user == answer.user)
            #expect(read.accessToken == answer.accessToken && read.serverTime == now)
        }
    }
}

import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Seed 000's client policies: the passkey nudge's schedule, the clock warning, deep links.
@Suite struct PoliciesTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func thePasskeyNudgeComesBackAfterAWeekAtMostThreeTimes() {
        var nudge = PasskeyNudge()
        #expect(nudge.shouldShow(after: .sms, accountHasPasskey: false, now: Self.start))
        #expect(nudge.shouldShow(after: .totp, accountHasPasskey: false, now: Self.start))
        #expect(!nudge.shouldShow(after: .webauthn, accountHasPasskey: false, now: Self.start), "a passkey sign-in")
        #expect(!nudge.shouldShow(after: .backup, accountHasPasskey: false, now: Self.start))
        #expect(!nudge.shouldShow(after: .sms, accountHasPasskey: true, now: Self.start))
        var now = Self.start
        for _ in 0..<3 {
            #expect(nudge.shouldShow(after: .sms, accountHasPasskey: false, now: now))
            nudge.shown(at: now)
            #expect(!nudge.shouldShow(after: .sms, accountHasPasskey: false, now: now.addingTimeInterval(6 * 86_400)))
            now = now.addingTimeInterval(7 * 86_400)
        }
        #expect(!nudge.shouldShow(after: .sms, accountHasPasskey: false, now: now.addingTimeInterval(365 * 86_400)))

        var settled = PasskeyNudge()
        settled.passkeyAdded()
        #expect(!settled.shouldShow(after: .sms, accountHasPasskey: false, now: Self.start))
    }

    @Test func aClockMoreThanThirtySecondsOffIsReported() {
        #expect(ClockCheck.skew(serverTime: Self.start, receivedAt: Self.start.addingTimeInterval(30)) == nil)
        #expect(ClockCheck.skew(serverTime: Self.start, receivedAt: Self.start.addingTimeInterval(-29)) == nil)
        #expect(ClockCheck.skew(serverTime: Self.start, receivedAt: Self.start.addingTimeInterval(45)) == 45)
        #expect(ClockCheck.skew(serverTime: Self.start, receivedAt: Self.start.addingTimeInterval(-90)) == -90)
    }

    @Test func deepLinksAndOTPAuthURIs() throws {
        func link(_ text: String) -> DeepLink? { URL(string: text).flatMap { DeepLink.parse($0) } }
        #expect(link("twofold://settings/2fa") == .twoFactorSettings)
        #expect(link("twofold://settings/2fa/setup-totp") == .setUpAuthenticator)
        #expect(link("TWOFOLD://settings/2fa/add-passkey") == .addPasskey)
        #expect(link("twofold://settings/2fa/backup-codes") == .backupCodes)
        #expect(link("twofold://2fa/recovery?token=abc123") == .recovery(token: "abc123"))
        #expect(link("twofold://2fa/recovery") == nil, "no token")
        #expect(link("twofold://2fa/recovery?token=a&token=b") == nil, "two tokens")
        #expect(link("twofold://settings/2fa/../admin") == nil)
        #expect(link("other://settings/2fa") == nil)
        #expect(
            URL(string: "etoroplus://settings/2fa").flatMap { DeepLink.parse($0, scheme: "etoroplus") }
                == .twoFactorSettings)

        // The recovery email's web link opens in the app (a universal link) only from its server.
        let server = try #require(URL(string: "https://id.example.com/"))
        func web(_ text: String) -> DeepLink? { URL(string: text).flatMap { DeepLink.parse($0, server: server) } }
        #expect(web("https://id.example.com/recovery/pass?token=abc123") == .recovery(token: "abc123"))
        #expect(web("https://ID.example.com/recovery/pass?token=abc123") == .recovery(token: "abc123"))
        #expect(web("https://id.example.com/recovery/pass") == nil, "no token")
        #expect(web("https://id.example.com/recovery/pass?token=a&token=b") == nil, "two tokens")
        #expect(web("https://evil.example.com/recovery/pass?token=abc123") == nil, "another host")
        #expect(web("https://id.example.com:8443/recovery/pass?token=abc123") == nil, "another port")
        #expect(web("http://id.example.com/recovery/pass?token=abc123") == nil, "another scheme")
        #expect(web("https://id.example.com/recovery/cancel?token=abc123") == nil, "another page")
        #expect(web("https://id.example.com/settings/2fa") == nil)
        #expect(link("https://id.example.com/recovery/pass?token=abc123") == nil, "no server known")

        let uri = "otpauth://totp/Twofold:pat@example.com?secret=JBSWY3DPEHPK3PXP&issuer=Twofold&digits=6&period=30"
        guard case .authenticator(let parsed) = link(uri) else {
            Issue.record("an otpauth URI was not read")
            return
        }
        #expect(parsed == (try OTPAuthURI(parsing: uri)))
        #expect(link("otpauth://totp/x?secret=not base32") == nil)
    }
}

/// A sign-in on a device whose clock is off says so at the second step.
@Suite struct ClockWarningTests {
    struct ChallengeServer: Transport {
        let serverTime: Date
        func send(_ request: URLRequest) async throws -> HTTPAnswer {
            let challenge = LoginChallengeResponse(
                otpFlowId: "flow", availableMethods: [.totp, .backup], maskedPhone: nil, maskedEmail: nil,
                expiresAt: serverTime.addingTimeInterval(300), serverTime: serverTime)
            return HTTPAnswer(
                status: 200, headers: ["Content-Type": "application/json"], body: try Wire.encoder().encode(challenge))
        }
    }

    @Test func theSecondStepWarnsOfADeviceClockOffByMoreThanThirtySeconds() async throws {
        let server = Date(timeIntervalSince1970: 1_800_000_000)
        for (offset, expected) in [(0.0, nil), (25, nil), (120, 120.0), (-45, -45)] as [(TimeInterval, TimeInterval?)] {
            let client = APIClient(
                baseURL: URL(string: "http://twofold.test")!, transport: ChallengeServer(serverTime: server))
            let flow = SignInFlow(
                client: client, session: SessionManager(client: client, store: MemoryTokenStore()),
                now: { server.addingTimeInterval(offset) })
            guard case .secondFactor(let step) = await flow.signIn("pat", password: "pw") else {
                Issue.record("no second step")
                return
            }
            #expect(step.clockSkew == expected, "device clock \(offset) s off")
        }
    }
}

import Crypto
import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import VaporTesting

@testable import TwofoldServer

extension DeviceCookies {
    /// Device cookies under a key of their own, for a service built without an app.
    static var forTests: DeviceCookies { DeviceCookies(secrets: SecretBox(key: SymmetricKey(size: .bits256))) }
}

/// Device cookies (issue V item 3, OWASP "device cookies"): every sign-in gives its device a
/// token, and the account's password sign-ins that carry it are counted per device, so strangers
/// guessing the password from many addresses cannot hold the owner out.
@Suite struct DeviceCookieTests {
    /// A token names one account on this server for a year; anything else is no token, read in
    /// bounded time.
    @Test func aTokenNamesItsAccountForItsLifetimeOnly() {
        let cookies = DeviceCookies.forTests
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let alice = UUID()
        let token = cookies.issue(userID: alice, epoch: 2, now: now)
        #expect(cookies.recognises(token, userID: alice, epoch: 2, now: now))
        #expect(cookies.recognises(token, userID: alice, epoch: 2, now: now.addingTimeInterval(364 * 86_400)))
        #expect(
            !cookies.recognises(token, userID: alice, epoch: 2, now: now.addingTimeInterval(366 * 86_400)), "expired")
        #expect(!cookies.recognises(token, userID: UUID(), epoch: 2, now: now), "another account's")
        #expect(!DeviceCookies.forTests.recognises(token, userID: alice, epoch: 2, now: now), "another server's key")
        // Signing out everywhere, a password change or a reset raises the epoch: no earlier
        // token counts any more.
        #expect(!cookies.recognises(token, userID: alice, epoch: 3, now: now), "after every session ended")
        #expect(cookies.issue(userID: alice, epoch: 2, now: now) != token, "each sign-in's own")
        // One character changed anywhere: not a token.
        for index in token.indices.dropFirst(3) {
            var changed = token
            changed.replaceSubrange(index...index, with: token[index] == "A" ? "B" : "A")
            #expect(!cookies.recognises(changed, userID: alice, epoch: 2, now: now), "\(changed)")
        }
        for junk in ["", "d1.", "d1..", "d1.\(token)", String(repeating: "d1.A", count: 10_000), "🙂", token + "."] {
            #expect(!cookies.recognises(junk, userID: alice, epoch: 2, now: now))
        }
    }

    /// Strangers from 50 fresh addresses send 5 wrong passwords a second for three minutes.
    /// The owner's device that signed in before gets in at the first try throughout; a device
    /// new to the account waits at most as long as `docs/security.md` says (the addresses' own
    /// limits hold 50 of them below the account bucket's refill).
    @Test func strangersGuessingFromFiftyAddressesDoNotHoldTheOwnerOut() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let signUp = try await Accounts.signUp(app, "alice", address: "10.9.0.1")
            let device = try #require(signUp.deviceToken, "a sign-in gives its device a token")
            func owner(_ token: String?, from address: String) async throws -> Int {
                try await status {
                    try await app.client(from: address).send(
                        API.Auth.login, LoginRequest(username: "alice", password: Accounts.password),
                        headers: token.map { [Wire.Header.deviceToken: $0] } ?? [:])
                }
            }
            var strangersRefused = 0
            var newDeviceIn: Int?
            for second in 0..<180 {
                for guess in 0..<5 {
                    let address = "10.1.\((second * 5 + guess) % 50).1"
                    let stranger = try await status {
                        try await app.client(from: address).send(
                            API.Auth.login, LoginRequest(username: "alice", password: "not-\(second)-\(guess)"))
                    }
                    if stranger == 429 { strangersRefused += 1 }
                    clock.advance(by: 0.2)
                    // The owner tries in the middle of the strangers' second, never first in
                    // line for the token the account bucket gained.
                    guard guess == 2 else { continue }
                    if second % 20 == 19 {
                        #expect(try await owner(device, from: "10.9.0.\(second)") == 200, "second \(second)")
                    }
                    if newDeviceIn == nil, second >= 30, try await owner(nil, from: "10.8.0.\(second)") == 200 {
                        newDeviceIn = second
                    }
                }
            }
            #expect(strangersRefused > 300, "the strangers were held back: \(strangersRefused) refused")
            // The account bucket ran dry at about 25 s; a new device is back in within 90 s.
            let waited = try #require(newDeviceIn, "a new device never got in")
            #expect(waited <= 90, "a new device waited \(waited) s")
            // A token of another account, or a forged one, is a device new to the account.
            let bob = try await Accounts.signUp(app, "bob", address: "10.9.1.1")
            let other = try #require(bob.deviceToken)
            #expect(
                !app.twofold.sessions.deviceCookies.recognises(other, userID: signUp.user.id, epoch: 0, now: clock.now))
        }
    }

    /// A device token is counted per device, as tightly as one address: guessing with a leaked
    /// one gives no more tries than an address does, and the right password resets its count.
    @Test func aDeviceTokenGivesNoMoreGuessesThanAnAddress() async throws {
        try await withTestApp { app in
            let signUp = try await Accounts.signUp(app, "alice")
            let device = try #require(signUp.deviceToken)
            var statuses: [Int] = []
            for attempt in 0..<7 {
                statuses.append(
                    try await status {
                        try await app.client(from: "10.2.\(attempt).1").send(
                            API.Auth.login, LoginRequest(username: "alice", password: "wrong-\(attempt)"),
                            headers: [Wire.Header.deviceToken: device])
                    })
            }
            #expect(statuses == [401, 401, 401, 401, 401, 429, 429], "\(statuses)")
            // Signed out everywhere, the token is a stranger's again (the account-wide bucket).
            _ = try await app.client().send(API.Auth.logoutAll, bearer: signUp.accessToken.token)
            let user = try #require(try await app.twofold.users.user(id: signUp.user.id))
            #expect(
                !app.twofold.sessions.deviceCookies.recognises(
                    device, userID: user.id, epoch: user.sessionEpoch, now: app.twofold.clock.now()))
        }
    }

    /// The pages set the device cookie at a sign-in, and send it back with the next one.
    @Test func thePagesKeepTheDeviceCookie() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice")
            let browser = TestBrowser(app)
            let signedIn = try await browser.signIn("alice")
            #expect(signedIn.status == .seeOther)
            let cookie = try #require(browser.cookies["twofold_device"])
            #expect(
                app.twofold.sessions.deviceCookies.recognises(
                    cookie, userID: alice.user.id, epoch: 0, now: app.twofold.clock.now()))
            // Sent back, it makes the next password sign-ins this browser's own: counted in its
            // own bucket (5, as one address's), whatever address the browser is at.
            browser.cookies["twofold_session"] = nil
            var statuses: [HTTPStatus] = []
            for attempt in 0..<6 {
                browser.address = "10.3.\(attempt).1"
                let form = try await browser.get("/")
                statuses.append(
                    try await browser.post(
                        "/", ["csrf": form.csrf ?? "", "account": "alice", "password": "no-\(attempt)"]
                    )
                    .status)
            }
            let refused = try #require(statuses.last)
            #expect(refused == .tooManyRequests, "the device's own bucket, as one address's: \(statuses)")
        }
    }
}

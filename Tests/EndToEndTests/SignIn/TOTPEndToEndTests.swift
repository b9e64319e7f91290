import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Authenticator-app sign-up and sign-in against the built binary, with codes computed by
/// oathtool and the setup QR code read back by zbarimg.
@Suite struct TOTPEndToEndTests {
    static func oathtoolCode(_ secret: String, at time: Date) throws -> String? {
        guard let oathtool = ExternalTool.find("oathtool", package: "oathtool") else { return nil }
        let output = try oathtool.run(["--totp", "--base32", "--now=@\(Int(time.timeIntervalSince1970))", secret])
        return output.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func totpSignUpAndSignIn() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        let server = try await ServerProcess(dataDirectory: data)
        defer { server.stop() }
        let client = server.client
        let tokens = try await TokenChecks.signIn(server, as: "frank")

        let setup = try await client.send(API.TwoFactor.totpSetup, bearer: tokens.accessToken.token)

        // The QR code in the answer decodes to exactly the otpauth URI.
        if let rsvg = ExternalTool.find("rsvg-convert", package: "librsvg2-bin"),
            let zbarimg = ExternalTool.find("zbarimg", package: "zbar-tools")
        {
            let svg = root.appendingPathComponent("setup.svg")
            let png = root.appendingPathComponent("setup.png")
            try Data(setup.qrCodeSvg.utf8).write(to: svg)
            #expect(try rsvg.run(["-o", png.path, svg.path]).status == 0)
            #expect(try zbarimg.run(["--raw", "--quiet", png.path]).text == setup.otpauthUri + "\n")
        }

        // Codes from an independent implementation; the server's clock is the real one here.
        guard let code = try Self.oathtoolCode(setup.secret, at: Date()) else { return }
        let enabled = try await client.send(
            API.TwoFactor.totpVerify, CodeRequest(code: code), bearer: tokens.accessToken.token)
        #expect(enabled.backupCodes?.count == 10)

        let challenge = try await client.send(
            API.Auth.login, LoginRequest(username: "frank", password: TestAccounts.password)
        ).challenge
        #expect(challenge.availableMethods == [.totp, .backup])
        #expect(abs(challenge.serverTime.timeIntervalSinceNow) < 30)

        // The confirming code's step is used; the next step's code signs in.
        let next = try #require(try Self.oathtoolCode(setup.secret, at: Date().addingTimeInterval(30)))
        let signedIn = try await client.send(
            API.SecondStep.validateTOTP, TOTPValidateRequest(tempToken: challenge.tempToken, code: next))
        if let verified = try TokenChecks.verify(signedIn.accessToken.token, on: server) {
            #expect(verified.text.contains(#""amr": ["pwd", "otp", "mfa"]"#))
        }
        server.stop()

        // The secret is nowhere in the database file, in any encoding.
        let database = try Data(contentsOf: data.appendingPathComponent("twofold.sqlite"))
        let wal = (try? Data(contentsOf: data.appendingPathComponent("twofold.sqlite-wal"))) ?? Data()
        for needle in [setup.secret, setup.secret.lowercased()] {
            #expect(database.range(of: Data(needle.utf8)) == nil)
            #expect(wal.range(of: Data(needle.utf8)) == nil)
        }
        #expect(!server.log.contains(setup.secret), "the secret is not logged")
        #expect(!server.log.contains(next), "codes are not logged")
    }
}

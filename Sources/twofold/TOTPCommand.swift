import ArgumentParser
import Foundation
import TwofoldCore

struct TOTPCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "totp",
        abstract: "Authenticator-app codes (RFC 6238).",
        subcommands: [Code.self, URI.self, TOTPEnableCommand.self]
    )

    /// Parameters shared by both subcommands.
    struct Parameters: ParsableArguments {
        @Option(help: "Code length: 6, 7 or 8.")
        var digits: Int = 6

        @Option(help: "HMAC hash: sha1, sha256 or sha512.")
        var algorithm: String = "sha1"

        @Option(help: "Seconds per time step.")
        var period: Int = 30

        func validated() throws -> (OTPAlgorithm, OTPDigits, TOTPPeriod) {
            guard let algorithm = OTPAlgorithm(name: algorithm) else {
                throw ValidationError("--algorithm must be sha1, sha256 or sha512, not \(self.algorithm)")
            }
            do {
                return (algorithm, try OTPDigits(digits), try TOTPPeriod(period))
            } catch {
                throw ValidationError(error.description)
            }
        }
    }

    struct Code: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the code for a Base32 secret (compare with `oathtool --totp`).")

        @Option(help: "The shared secret in Base32.")
        var secret: String

        @Option(help: "Unix time in seconds; now if omitted.")
        var time: Int64?

        @OptionGroup var parameters: Parameters

        func run() throws {
            let (algorithm, digits, period) = try parameters.validated()
            let key: [UInt8]
            do { key = try Base32.decode(secret) } catch { throw ValidationError(error.description) }
            let time = self.time ?? Int64(Date().timeIntervalSince1970)
            do {
                let totp = try TOTP(secret: key, algorithm: algorithm, digits: digits, period: period)
                print(try totp.code(at: time))
            } catch {
                throw ValidationError(error.description)
            }
        }
    }

    struct URI: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the otpauth:// URI an authenticator app scans.")

        @Option(help: "Who issues the code, shown in the app.")
        var issuer: String

        @Option(help: "The account, usually an email address.")
        var account: String

        @Option(help: "The shared secret in Base32.")
        var secret: String

        @OptionGroup var parameters: Parameters

        func run() throws {
            let (algorithm, digits, period) = try parameters.validated()
            do {
                let uri = try OTPAuthURI(
                    kind: .totp(period: period), issuer: issuer, account: account,
                    secret: try Base32.decode(secret), algorithm: algorithm, digits: digits)
                print(uri.string)
            } catch let error as CustomStringConvertible {
                throw ValidationError(error.description)
            }
        }
    }
}

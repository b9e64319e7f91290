import Foundation
import Testing

/// A stand-in for Apple's push service (`scripts/apns_fake.py`) on a free loopback port: HTTP/2
/// over TLS with a fresh certificate, checking the provider token against a fresh `.p8` key made
/// here, the topic, the push type and the body, as Apple does. `environment` points a server at it.
public final class FakeAPNs: @unchecked Sendable {
    // Safe: the fields are set once in `init`.
    public let port: Int
    public let directory: URL
    /// The `.p8` key (PKCS #8 PEM, P-256) the server signs its provider tokens with.
    public let keyFile: URL
    /// The certificate the server must trust (`TWOFOLD_APNS_CA_FILE`).
    public let certificate: URL
    public let keyID = "KEY4TWOFLD"
    public let teamID = "TEAM2FOLD0"
    public let topic = "dev.twofold.app"
    private let script: ScriptProcess

    /// One request as the fake saw it, and what it answered.
    public struct Received: Decodable, Sendable {
        public let headers: [String: String]
        public let payload: Payload?
        public let status: Int
        public let reason: String?

        /// The device token in the path.
        public var token: String? { headers[":path"].map { String($0.dropFirst("/3/device/".count)) } }
    }

    /// The JSON the phone would get.
    public struct Payload: Decodable, Sendable {
        public struct APS: Decodable, Sendable {
            public struct Alert: Decodable, Sendable {
                public let title: String
                public let body: String
            }
            public let alert: Alert
            public let category: String?
        }
        public let aps: APS
        public let twofold: [String: String]
    }

    /// Starts the fake. Tokens in `gone` are answered 410 Unregistered; with `expireFirst`, the
    /// first request is answered 403 ExpiredProviderToken.
    public init(python: ExternalTool, gone: [String] = [], expireFirst: Bool = false) throws {
        directory = try BuildProducts.temporaryDirectory("apns")
        let received = directory.appendingPathComponent("received")
        try FileManager.default.createDirectory(at: received, withIntermediateDirectories: true)
        certificate = directory.appendingPathComponent("cert.pem")
        let tlsKey = directory.appendingPathComponent("tls-key.pem")
        try TestCertificate.make(certificate: certificate, key: tlsKey)
        keyFile = directory.appendingPathComponent("AuthKey_\(keyID).p8")
        let publicKey = directory.appendingPathComponent("provider-public.pem")
        let openssl = try #require(ExternalTool.find("openssl", package: "openssl"))
        for arguments in [
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyFile.path],
            ["pkey", "-in", keyFile.path, "-pubout", "-out", publicKey.path],
        ] {
            let made = try openssl.run(arguments)
            try #require(made.status == 0, "openssl: \(made.errorText)")
        }
        port = SMTPSink.freePort()
        var arguments = [
            BuildProducts.repositoryRoot.appendingPathComponent("scripts/apns_fake.py").path, "--port", String(port),
            "--outdir", received.path, "--cert", certificate.path, "--key", tlsKey.path, "--public-key",
            publicKey.path, "--key-id", keyID, "--team-id", teamID, "--topic", topic, "--gone",
            gone.joined(separator: ","),
        ]
        if expireFirst { arguments.append("--expire-first") }
        script = try ScriptProcess(python: python, arguments: arguments)
    }

    /// The settings that send a server's notifications here.
    public var environment: [String: String] {
        [
            "TWOFOLD_APNS_KEY_FILE": keyFile.path, "TWOFOLD_APNS_KEY_ID": keyID, "TWOFOLD_APNS_TEAM_ID": teamID,
            "TWOFOLD_APNS_TOPIC": topic, "TWOFOLD_APNS_SERVER": "https://127.0.0.1:\(port)",
            "TWOFOLD_APNS_CA_FILE": certificate.path,
        ]
    }

    /// Every request received so far, in order.
    public func received() throws -> [Received] {
        try ScriptProcess.records(in: directory.appendingPathComponent("received"))
    }

    /// Waits up to `seconds` for at least `count` requests.
    public func waitForReceived(_ count: Int, seconds: Double = 20) async throws -> [Received] {
        try await poll(seconds: seconds, received) { $0.count >= count }
    }

    public func stop() { script.stop() }
}

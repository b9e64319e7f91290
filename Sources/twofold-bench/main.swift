import Foundation
import TwofoldCore

// Prints how fast the core primitives and the SDK's local work run; with
// `--sdk-server URL [--clients N] [--seconds S]`, only the sign-ins a server answers to N SDK
// clients at once; with `--push-server URL [--waiting N] [--server-pid PID]`, only "Approve on
// your phone" with N sign-ins waiting at once. Build in release mode: `scripts/bench`.
// Figures, not assertions: timing on shared machines is too noisy for pass/fail tests.

func measure(_ name: String, iterations: Int, _ body: () throws -> Void) rethrows {
    let clock = ContinuousClock()
    for _ in 0..<max(1, iterations / 10) { try body() }  // warm up
    let elapsed = try clock.measure {
        for _ in 0..<iterations { try body() }
    }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let perOperation = seconds / Double(iterations) * 1e6
    printFigure(name, perOperation: perOperation, perSecond: Double(iterations) / seconds)
}

let secret = Array("12345678901234567890".utf8)
let totp = try TOTP(secret: secret)
let now: Int64 = 1_790_000_000
let code = try totp.code(at: now)
let uri =
    "otpauth://totp/eToro:user@email.com?secret=JBSWY3DPEHPK3PXP&issuer=eToro&algorithm=SHA1&digits=6&period=30"

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}
if let server = option("--push-server").flatMap(URL.init(string:)) {
    try await PushBench.run(
        server: server, waiting: option("--waiting").flatMap(Int.init) ?? 1000,
        serverPID: option("--server-pid").flatMap(Int.init))
    exit(0)
}
if let server = option("--sdk-server").flatMap(URL.init(string:)) {
    try await SDKBench.load(
        server: server, clients: option("--clients").flatMap(Int.init) ?? 50,
        seconds: option("--seconds").flatMap(Int.init) ?? 10)
    exit(0)
}

print("Twofold core benchmarks")
try measure("TOTP code (SHA-1, 6 digits)", iterations: 200_000) { _ = try totp.code(at: now) }
try measure("TOTP verify, window ±1 (3 HMACs)", iterations: 100_000) { _ = try totp.verify(code, at: now) }
try measure("Base32 decode (32 symbols)", iterations: 200_000) {
    _ = try Base32.decode("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
}
try measure("otpauth URI parse", iterations: 100_000) { _ = try OTPAuthURI(parsing: uri) }
measure("backup codes, set of 10", iterations: 50_000) { _ = BackupCodes.generate() }
try measure("QR encode otpauth URI (M) + SVG", iterations: 500) { _ = try QRCode(text: uri).svg() }
let long = String(repeating: "a", count: 2_900)
try measure("QR encode 2900 bytes (version 40, L)", iterations: 20) {
    _ = try QRCode(text: long, errorCorrection: .low)
}

try await SDKBench.local()

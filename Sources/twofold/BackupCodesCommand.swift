import ArgumentParser
import TwofoldCore

struct BackupCodesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup-codes", abstract: "Print a fresh set of backup codes (XXXX-XXXX).")

    @Option(help: "How many codes.")
    var count: Int = BackupCodes.setSize

    func run() throws {
        guard (1...100).contains(count) else { throw ValidationError("--count must be 1 to 100") }
        for code in BackupCodes.generate(count: count) { print(code) }
    }
}

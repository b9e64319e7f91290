import ArgumentParser

/// `twofold`: one-time codes, otpauth URIs, QR codes and backup codes from the command line.
@main
struct Twofold: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "twofold",
        abstract: "Twofold's command-line tool.",
        subcommands: [TOTPCommand.self, QRCommand.self, BackupCodesCommand.self]
    )
}

import ArgumentParser

/// `twofold`: an account on a Twofold server (register, login, status, logout), and one-time
/// codes, otpauth URIs, QR codes, backup codes and passkey ceremony checks, from the command line.
@main
struct Twofold: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "twofold",
        abstract: "Twofold's command-line tool.",
        subcommands: [
            RegisterCommand.self, LoginCommand.self, StatusCommand.self, LogoutCommand.self, TOTPCommand.self,
            PasskeyCommand.self, DeviceCommand.self, ScenariosCommand.self, DashboardCommand.self, QRCommand.self,
            BackupCodesCommand.self,
            WebAuthnCommand.self,
        ]
    )

    /// `twofold --server URL <command>`: given here, it reaches the command's own `--server`.
    @OptionGroup var options: ServerOptions
}

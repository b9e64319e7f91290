#if canImport(UIKit) && os(iOS)
    import Foundation
    import TwofoldClient
    import UIKit

    /// The usual signs of a jailbroken iPhone: the files a jailbreak installs, a package
    /// manager's URL scheme, and a write outside the app's sandbox that succeeds. A heuristic
    /// (a determined attacker hides them), so the app only warns (`AppModel.checkIntegrity`).
    /// The simulator is never reported.
    public struct JailbreakSigns: DeviceIntegrityCheck {
        /// Files a jailbreak leaves behind.
        static let paths = [
            "/Applications/Cydia.app", "/Applications/Sileo.app", "/Library/MobileSubstrate/MobileSubstrate.dylib",
            "/bin/bash", "/usr/sbin/sshd", "/etc/apt", "/private/var/lib/apt/", "/var/jb",
        ]

        public init() {}

        public func looksCompromised() async -> Bool {
            #if targetEnvironment(simulator)
                return false
            #else
                if Self.paths.contains(where: { FileManager.default.fileExists(atPath: $0) }) { return true }
                let outside = "/private/twofold-sandbox-check.txt"
                if (try? "x".write(toFile: outside, atomically: true, encoding: .utf8)) != nil {
                    try? FileManager.default.removeItem(atPath: outside)
                    return true
                }
                return await MainActor.run {
                    URL(string: "cydia://package/com.example").map { UIApplication.shared.canOpenURL($0) } ?? false
                }
            #endif
        }
    }
#endif

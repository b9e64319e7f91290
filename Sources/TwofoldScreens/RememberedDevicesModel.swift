import Foundation
import Observation
import TwofoldAPI
import TwofoldClient

/// Seed 002's remembered devices in the app: the devices that skip the second step, where each
/// was remembered, when it was last used and until when, and "Forget" for each (its next
/// sign-in asks the second step again).
@MainActor @Observable
public final class RememberedDevicesModel {
    /// The remembered devices, as the server last listed them.
    public private(set) var devices: [TrustedDeviceDTO] = []
    /// Whether the list was read at least once (an empty list then means none).
    public private(set) var loaded = false
    /// A request is out.
    public private(set) var working = false
    /// What went wrong last.
    public private(set) var problem: SignInProblem?
    private let security: AccountSecurity

    /// The remembered devices of `security`'s account.
    public init(security: AccountSecurity) { self.security = security }

    /// Reads the list.
    public func load() async {
        await run { [security] in
            self.devices = try await security.rememberedDevices()
            self.loaded = true
        }
    }

    /// Forgets `device`, then reads the list again.
    public func forget(_ device: TrustedDeviceDTO) async {
        await run { [security] in
            try await security.forgetRememberedDevice(device.id)
            self.devices = try await security.rememberedDevices()
        }
    }

    /// "Last used 3 Dec 2026 · remembered until 2 Jan 2027", in the phone's calendar.
    public static func detail(_ device: TrustedDeviceDTO) -> String {
        let used = device.lastUsedAt ?? device.createdAt
        return "Last used \(used.formatted(date: .abbreviated, time: .omitted)) · "
            + "remembered until \(device.expiresAt.formatted(date: .abbreviated, time: .omitted))"
    }

    private func run(_ body: @MainActor () async throws -> Void) async {
        working = true
        defer { working = false }
        problem = await ScreenCall.problem(body)
    }
}

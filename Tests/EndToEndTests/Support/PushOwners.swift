import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice
import TwofoldTestSupport

/// An owner with an authenticator app, backup codes and a phone holding a device key.
struct PushOwner {
    let name: String
    let secret: [UInt8]
    var backupCodes: [String]
    let phone: PhoneApprovals
    let virtualPhone: VirtualPhone

    static func make(_ target: TestServers.Target, _ name: String) async throws -> PushOwner {
        var (secret, codes) = try await SDKAccounts.accountWithTOTP(target.client, name)
        // The phone signs in with the password and a backup code, and enrols its key there.
        guard
            case .secondStep(let flow) = try await target.client.send(
                API.Auth.login, LoginRequest(username: name, password: TestAccounts.password))
        else { throw Unexpected("no second step") }
        let session = SessionManager(client: target.client, store: MemoryTokenStore())
        await session.signedIn(
            try await target.client.send(
                API.SecondStep.verifyBackupCode,
                BackupCodeVerifyRequest(otpFlowId: flow.otpFlowId, backupCode: codes.removeFirst())))
        let virtualPhone = VirtualPhone(.faceID)
        let flows = DeviceKeyFlows(session: session, device: virtualPhone, deviceID: "\(name)-phone")
        #expect(try await flows.enroll(username: name) == .enrolled(.biometric))
        return PushOwner(
            name: name, secret: secret, backupCodes: codes,
            phone: PhoneApprovals(session: session, signer: flows.signer(username: name)),
            virtualPhone: virtualPhone)
    }

    /// A computer's sign-in with the password, at its second step.
    func computer(_ target: TestServers.Target) async throws -> SignInFlow {
        let flow = SignInFlow(
            client: target.client, session: SessionManager(client: target.client, store: MemoryTokenStore()))
        guard case .secondFactor(let step) = await flow.signIn(name, password: TestAccounts.password) else {
            throw Unexpected("no second step")
        }
        #expect(step.methods.contains(.push) && !step.methods.contains(.deviceKey), "\(step.methods)")
        return flow
    }

    /// Asks the phone from `computer`; the number the computer shows.
    func ask(_ computer: SignInFlow) async throws -> Int {
        guard case .secondFactor(let step) = await computer.askPhone(), let approval = step.approval else {
            throw Unexpected("no request: \(await computer.state)")
        }
        return approval.number
    }

    /// What the phone shows (waiting for it to arrive).
    func shown() async throws -> PushApprovalDTO {
        try #require(try await phone.waiting(wait: 10).first)
    }
}

struct Unexpected: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import Crypto
import Foundation
import TwofoldAPI
import TwofoldClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// "Approve on your phone" (issue Z): `waiting` sign-ins wait for their phones at once (each a
// long poll held by the server), then each phone approves in turn; the time from the phone's
// answer to the waiting client's session, median and p99, and the server's threads and memory
// while they wait.

enum PushBench {
    /// A device key in software (P-256, DER signatures, as the Secure Enclave signs).
    struct Key: DeviceKeySigning {
        let deviceID: String
        let key = P256.Signing.PrivateKey()
        func sign(challenge: Data) async throws(DeviceAuthFailure) -> Data {
            do { return try key.signature(for: challenge).derRepresentation } catch { throw .keyInvalidated }
        }
    }

    /// An account waiting at its second step, and its phone.
    struct Waiting: Sendable {
        let flow: String
        let requestID: String
        let number: Int
        let phone: PhoneApprovals
    }

    static func run(server: URL, waiting count: Int, serverPID: Int?) async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = count + 64
        configuration.timeoutIntervalForRequest = 120
        configuration.httpCookieStorage = nil
        let client = APIClient(
            baseURL: server, transport: URLSessionTransport(session: URLSession(configuration: configuration)))
        let password = "Bench-\(UUID().uuidString)"
        let prefix = "push" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        print("Approve on your phone: \(count) sign-ins waiting at once, then each approved")
        let threadsBefore = serverPID.flatMap(threads)
        var accounts: [Waiting] = []
        for batch in stride(from: 0, to: count, by: 32) {
            accounts += try await withThrowingTaskGroup(of: Waiting.self) { group in
                for index in batch..<min(count, batch + 32) {
                    group.addTask {
                        try await prepare(name: "\(prefix)-\(index)", password: password, client: client)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        let approvedAt = Moments()
        let clock = ContinuousClock()
        let began = clock.now
        let outcomes = try await withThrowingTaskGroup(of: Duration?.self) { group in
            for account in accounts {
                group.addTask {
                    while true {
                        let answer = try await client.send(
                            API.Push.status,
                            PushStatusRequest(otpFlowId: account.flow, requestId: account.requestID, wait: 25))
                        if answer.status == .approved { break }
                        guard answer.status == .pending else { return nil }
                    }
                    _ = try await client.send(
                        API.Push.complete, PushCompleteRequest(otpFlowId: account.flow, requestId: account.requestID))
                    let signedIn = clock.now
                    return await approvedAt.moment(of: account.requestID).map { signedIn - $0 }
                }
            }
            // Every waiter is parked at the server before the first phone answers.
            try await Task.sleep(for: .seconds(3))
            let held = serverPID.flatMap(threads)
            let memory = serverPID.flatMap(residentMegabytes)
            print(
                "  waiting: \(count) long polls held; server threads \(threadsBefore.map(String.init) ?? "?") before, "
                    + "\(held.map(String.init) ?? "?") while they wait; resident \(memory.map(String.init) ?? "?") MB")
            for account in accounts {
                guard let request = try await account.phone.waiting().first else { throw BenchFailure("nothing waits") }
                await approvedAt.mark(request.requestId, clock.now)
                _ = try await account.phone.answer(request, .approve, number: account.number)
            }
            return try await group.reduce(into: [Duration]()) { if let value = $1 { $0.append(value) } }
        }
        let latencies = outcomes.sorted()
        print(
            "  approval → session: p50 \(milliseconds(latencies, 0.5)) ms, p99 \(milliseconds(latencies, 0.99)) ms over "
                + "\(latencies.count) sign-ins (\(count - latencies.count) not signed in; "
                + "\(String(format: "%.1f", Double((clock.now - began).components.seconds))) s in all)")
    }

    /// Registers `name`, enrols a device key from a password session, and starts a password
    /// sign-in that asks the phone.
    static func prepare(name: String, password: String, client: APIClient) async throws -> Waiting {
        _ = try await client.send(
            API.Auth.register, RegisterRequest(username: name, email: "\(name)@example.com", password: password))
        let session = SessionManager(client: client, store: MemoryTokenStore())
        guard
            case .signedIn(let tokens) = try await client.send(
                API.Auth.login, LoginRequest(username: name, password: password))
        else { throw BenchFailure("\(name) has a second factor already") }
        await session.signedIn(tokens)
        let key = Key(deviceID: "phone-\(name)")
        _ = try await client.send(
            API.DeviceKeys.enroll,
            DeviceEnrollRequest(
                username: name, publicKey: key.key.publicKey.x963Representation.base64EncodedString(),
                method: "secureEnclave", deviceId: key.deviceID),
            bearer: try await session.accessToken())
        guard
            case .secondStep(let flow) = try await client.send(
                API.Auth.login, LoginRequest(username: name, password: password))
        else { throw BenchFailure("no second step for \(name)") }
        let started = try await client.send(API.Push.start, PushStartRequest(otpFlowId: flow.otpFlowId))
        return Waiting(
            flow: flow.otpFlowId, requestID: started.requestId, number: started.number,
            phone: PhoneApprovals(session: session, signer: key))
    }

    /// When each phone answered, by request.
    actor Moments {
        private var moments: [String: ContinuousClock.Instant] = [:]
        private var waiting: [String: CheckedContinuation<ContinuousClock.Instant, Never>] = [:]

        func mark(_ id: String, _ instant: ContinuousClock.Instant) {
            moments[id] = instant
            waiting.removeValue(forKey: id)?.resume(returning: instant)
        }

        func moment(of id: String) async -> ContinuousClock.Instant? {
            if let instant = moments[id] { return instant }
            return await withCheckedContinuation { waiting[id] = $0 }
        }
    }

    /// The server's thread count (`/proc/PID/status`).
    static func threads(_ pid: Int) -> Int? { status(pid, "Threads:") }

    static func residentMegabytes(_ pid: Int) -> Int? { status(pid, "VmRSS:").map { $0 / 1024 } }

    private static func status(_ pid: Int, _ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first { $0.hasPrefix(field) }.flatMap {
            Int($0.dropFirst(field.count).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
        }
    }
}

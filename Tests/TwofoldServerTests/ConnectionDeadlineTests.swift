import Foundation
import NIOPosix
import Testing

@testable import TwofoldServer

/// The wait for a PostgreSQL connection ends with a refusal only when the client hands out no
/// connection at all for the whole deadline; a wait behind a busy pool goes on.
struct ConnectionDeadlineTests {
    /// Sleeps `wait` under a deadline of `deadline`; true when the deadline cut it short.
    private func cutShort(wait: Duration, deadline: Duration, leases: LeaseClock) async -> Bool {
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        return await Task {
            let timer = Deadline(after: deadline, on: loop, unlessSince: leases)
            defer { timer.finish() }
            do {
                try await Task.sleep(for: wait)
                return false
            } catch {
                return timer.passed
            }
        }.value
    }

    @Test func aWaitWhileNoConnectionIsHandedOutEndsAtTheDeadline() async {
        // Not cut short, the sleep would run its 10 s and answer false.
        #expect(await cutShort(wait: .seconds(10), deadline: .milliseconds(200), leases: LeaseClock()))
    }

    @Test func aWaitBehindABusyPoolOutlastsTheDeadline() async {
        let leases = LeaseClock()
        // Leases from a thread of its own, so a busy test run cannot starve them.
        let busy = Thread {
            while !Thread.current.isCancelled {
                leases.record()
                usleep(10_000)
            }
        }
        busy.start()
        defer { busy.cancel() }
        #expect(!(await cutShort(wait: .milliseconds(1_500), deadline: .milliseconds(500), leases: leases)))
    }

    @Test func aWaitThatFinishesInTimeIsNotCutShort() async {
        #expect(!(await cutShort(wait: .milliseconds(10), deadline: .seconds(1), leases: LeaseClock())))
    }
}

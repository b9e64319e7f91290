import Foundation
import NIOPosix
import Testing

@testable import TwofoldServer

/// The wait for a PostgreSQL connection ends with a refusal only when the client hands out no
/// connection at all for the whole deadline; a wait behind a busy pool goes on.
struct ConnectionDeadlineTests {
    private static func watch(limit: Duration) -> ConnectionWatch {
        ConnectionWatch(limit: limit, interval: .milliseconds(20), on: MultiThreadedEventLoopGroup.singleton.any())
    }

    /// Sleeps `wait` as a statement waiting for its connection under `watch`; true when the
    /// watch cut it short.
    private func cutShort(wait: Duration, watch: ConnectionWatch) async -> Bool {
        await Task {
            let ticket = watch.waiting()
            do {
                try await Task.sleep(for: wait)
                watch.leased(ticket)
                return false
            } catch {
                return watch.ended(ticket)
            }
        }.value
    }

    @Test func aWaitWhileNoConnectionIsHandedOutEndsAtTheDeadline() async {
        let watch = Self.watch(limit: .milliseconds(200))
        defer { watch.stop() }
        let start = ContinuousClock.now
        // Not cut short, the sleep would run its 10 s and answer false.
        #expect(await cutShort(wait: .seconds(10), watch: watch))
        #expect(ContinuousClock.now - start >= .milliseconds(200))
    }

    @Test func aWaitBehindABusyPoolOutlastsTheDeadline() async {
        let watch = Self.watch(limit: .milliseconds(500))
        defer { watch.stop() }
        // Other statements get connections, from a thread of their own so that a busy test run
        // cannot starve them.
        let busy = Thread {
            while !Thread.current.isCancelled {
                watch.leased(nil)
                usleep(10_000)
            }
        }
        busy.start()
        defer { busy.cancel() }
        #expect(!(await cutShort(wait: .milliseconds(1_500), watch: watch)))
    }

    @Test func aWaitThatFinishesInTimeIsNotCutShort() async {
        let watch = Self.watch(limit: .seconds(1))
        defer { watch.stop() }
        #expect(!(await cutShort(wait: .milliseconds(10), watch: watch)))
    }

    @Test func aWaitThatGotItsConnectionIsNeverCancelledAfterwards() async throws {
        let watch = Self.watch(limit: .milliseconds(50))
        defer { watch.stop() }
        // Registered, then leased at once: the sweeps that come after leave the task alone.
        let outcome = await Task { () -> Bool in
            let ticket = watch.waiting()
            watch.leased(ticket)
            do {
                try await Task.sleep(for: .milliseconds(300))
                return true
            } catch {
                return false
            }
        }.value
        #expect(outcome)
    }

    @Test func aConnectionHandedOutAsTheWaitWasCutShortIsToldSo() async {
        let watch = Self.watch(limit: .milliseconds(50))
        defer { watch.stop() }
        // The sweep cancels the wait; the connection comes just after: `leased` says the wait
        // was cut short, so the statement answers as for no connection (and does not run on a
        // cancelled task).
        let cutShortAtLease = await Task { () -> Bool in
            let ticket = watch.waiting()
            do {
                try await Task.sleep(for: .seconds(10))
                return false
            } catch {
                return watch.leased(ticket)
            }
        }.value
        #expect(cutShortAtLease)
    }
}

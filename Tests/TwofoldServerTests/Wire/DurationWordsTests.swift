import Foundation
import Testing

@testable import TwofoldServer

/// Answers and messages state the configured durations (`TWOFOLD_*_SECONDS`), not the defaults.
@Suite struct DurationWordsTests {
    @Test func durationsReadAsAPersonSaysThem() {
        #expect(TimeInterval(300).inWords == "5 minutes")
        #expect(TimeInterval(60).inWords == "1 minute")
        #expect(TimeInterval(90).inWords == "90 seconds")
        #expect(TimeInterval(1).inWords == "1 second")
        #expect(TimeInterval(7200).inWords == "2 hours")
        #expect(TimeInterval(119.5).inWords == "2 minutes")
    }

    @Test func aStepUpRefusalStatesTheConfiguredWindow() {
        for (window, words) in [(300.0, "within 5 minutes"), (120, "within 2 minutes"), (45, "within 45 seconds")] {
            let problem = SignInPolicy.problem(.recentPassword, window: window)
            #expect(problem.detail?.contains(words) == true, "\(problem.detail ?? "")")
        }
    }
}

import Testing

@testable import TwofoldServer

/// Sessions named as a person would name them, not by their raw User-Agent (issue W item 4).
@Suite struct SessionNamesTests {
    @Test func sessionsAreNamedByWhatSignedIn() {
        let cases: [(String?, String)] = [
            (
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
                "Chrome on Linux"
            ),
            (
                "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                    + "Version/18.1 Mobile/15E148 Safari/604.1", "Safari on iPhone"
            ),
            (
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
                    + "Safari/537.36 Edg/131.0.0.0", "Edge on Windows"
            ),
            ("Mozilla/5.0 (Macintosh; Intel Mac OS X 14.1; rv:132.0) Gecko/20100101 Firefox/132.0", "Firefox on macOS"),
            ("twofold-cli/1", "twofold CLI"),
            ("Twofold-iOS/1 (iPhone)", "Twofold for iPhone"),
            ("curl/7.88.1", "curl"),
            ("python-requests/2.31", "Unknown app"),
            (nil, "Unknown browser"),
        ]
        for (agent, name) in cases {
            #expect(SessionNames.name(agent) == name, "\(agent ?? "nil")")
        }
    }
}

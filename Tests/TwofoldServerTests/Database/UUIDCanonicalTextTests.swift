import Foundation
import Testing

@testable import TwofoldServer

/// `UUID.canonicalText` agrees with Foundation's `uuidString`, which sqlite-kit and earlier tokens use.
@Suite(.tags(.database))
struct UUIDTextTests {
    @Test func writesWhatUUIDStringWritesAndReadsWhatUUIDStringReads() {
        for _ in 0..<1000 {
            let uuid = UUID()
            #expect(uuid.canonicalText == uuid.uuidString)
            #expect(UUID(canonicalText: uuid.uuidString) == uuid)
            #expect(UUID(canonicalText: uuid.uuidString.lowercased()) == uuid)
        }
    }

    @Test func refusesWhatUUIDStringRefuses() {
        let bad = [
            "", "E621E1F8-C36C-495A-93FC-0C247A3E6E5", "E621E1F8-C36C-495A-93FC-0C247A3E6E5FF",
            "E621E1F8C36C-495A-93FC-0C247A3E6E5F0", "G621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            "E621E1F8-C36C-495A-93FC-0C247A3E6E5Ä", "E621E1F8_C36C-495A-93FC-0C247A3E6E5F",
        ]
        for text in bad {
            #expect(UUID(canonicalText: text) == nil, "\(text)")
            #expect(UUID(uuidString: text) == nil, "\(text)")
        }
    }
}

import Testing
import Vapor

@testable import TwofoldServer

/// `Application.twofold` keeps, per thread, the context it read last: it must still answer each
/// application's own context when several are alive and read in turn on one thread.
@Suite struct TwofoldContextTests {
    @Test func eachApplicationReadsItsOwnContextWhenReadInTurn() async throws {
        try await withTestApp { first in
            try await withTestApp { second in
                // No suspension between the reads: they run on one thread, through its cache.
                let reads = [first.twofold, second.twofold, first.twofold, second.twofold, second.twofold]
                #expect(reads[0] !== reads[1])
                #expect(reads[0] === reads[2])
                #expect(reads[1] === reads[3] && reads[3] === reads[4])
                #expect(
                    first.twofold.configuration.dataDirectory != second.twofold.configuration.dataDirectory)
            }
        }
    }
}

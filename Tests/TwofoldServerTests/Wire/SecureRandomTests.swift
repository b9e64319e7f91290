import Foundation
import Testing

@testable import TwofoldServer

struct SecureRandomTests {
    @Test func givesTheBytesAskedForAndNeverTheSameTwice() {
        for count in [0, 1, 7, 8, 9, 16, 20, 32, 33, 300, 4096] {
            #expect(SecureRandom.bytes(count).count == count)
        }
        let tokens = Set((0..<1000).map { _ in SecureRandom.bytes(32) })
        #expect(tokens.count == 1000)
        // Every byte value turns up across 32,000 bytes (a stuck or short generator would not).
        #expect(Set(tokens.joined()).count == 256)
    }

    @Test func timeOrderedUUIDsAreVersionSevenAndSortByTimeAsText() {
        let start = Date(timeIntervalSince1970: 1_800_000_000.5)
        let uuids = (0..<1000).map { SecureRandom.timeOrderedUUID(at: start.addingTimeInterval(Double($0) * 0.002)) }
        #expect(Set(uuids).count == 1000)
        for uuid in uuids {
            #expect(uuid.uuid.6 >> 4 == 7, "version 7")
            #expect(uuid.uuid.8 >> 6 == 0b10, "RFC 9562 variant")
            #expect(UUID(uuidString: uuid.uuidString) == uuid)
        }
        // The first 48 bits are the Unix time in milliseconds (RFC 9562 §5.7, test vector layout).
        let hex = String(uuids[0].uuidString.filter { $0 != "-" }.prefix(12))
        #expect(hex == String(1_800_000_000_500, radix: 16, uppercase: true).leftPadded(12))
        // Stored as upper-case text, later ids sort after earlier ones: appended at the index's end.
        let texts = uuids.map(\.uuidString)
        #expect(zip(texts, texts.dropFirst()).allSatisfy { $0 < $1 })
        // Within one millisecond the 74 random bits still differ.
        let same = Set((0..<1000).map { _ in SecureRandom.timeOrderedUUID(at: start) })
        #expect(same.count == 1000)
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}

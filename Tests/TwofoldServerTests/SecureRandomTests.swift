import Foundation
import Testing

@testable import TwofoldServer

struct SecureRandomTests {
    @Test func givesTheBytesAskedForAndNeverTheSameTwice() {
        for count in [1, 7, 8, 9, 16, 20, 32, 33] {
            #expect(SecureRandom.bytes(count).count == count)
        }
        let tokens = Set((0..<1000).map { _ in SecureRandom.bytes(32) })
        #expect(tokens.count == 1000)
        // Every byte value turns up across 32,000 bytes (a stuck or short generator would not).
        #expect(Set(tokens.joined()).count == 256)
    }

    @Test func uuidsAreVersionFourAndRead() {
        let uuids = (0..<1000).map { _ in SecureRandom.uuid() }
        #expect(Set(uuids).count == 1000)
        for uuid in uuids {
            #expect(uuid.uuid.6 >> 4 == 4, "version 4")
            #expect(uuid.uuid.8 >> 6 == 0b10, "RFC 9562 variant")
            #expect(UUID(uuidString: uuid.uuidString) == uuid)
        }
    }
}

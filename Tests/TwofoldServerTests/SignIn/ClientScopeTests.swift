import Foundation
import Testing

@testable import TwofoldServer

/// Issue T: strangers' anonymous attempts are counted per IPv4 address or IPv6 /64.
struct ClientScopeTests {
    @Test func anIPv6SlashSixtyFourIsOneScopeHoweverItIsSpelt() {
        let scope = ClientScope.of("2001:db8:7:1::1")
        for spelling in ["2001:db8:7:1:ffff::2", "2001:0db8:0007:0001:0:0:0:9", "2001:DB8:7:1::abcd"] {
            #expect(ClientScope.of(spelling) == scope, "\(spelling)")
        }
        #expect(ClientScope.of("2001:db8:7:2::1") != scope, "the next /64 is another")
        #expect(ClientScope.of("192.0.2.1") == "192.0.2.1" && ClientScope.of("192.0.2.2") != "192.0.2.1")
        #expect(ClientScope.of(nil) == "-" && ClientScope.of("") == "-")
        // A dual-stack listener reports IPv4 clients as mapped addresses: each is its own scope.
        #expect(ClientScope.of("::ffff:203.0.113.10") == "203.0.113.10")
        #expect(ClientScope.of("::ffff:198.51.100.99") != ClientScope.of("::ffff:203.0.113.10"))
    }

    @Test func eachUserAndScopeHasItsOwnFlow() {
        let alice = UUID()
        #expect(ClientScope.flow(userID: alice, scope: "a") == ClientScope.flow(userID: alice, scope: "a"))
        #expect(ClientScope.flow(userID: alice, scope: "a") != ClientScope.flow(userID: alice, scope: "b"))
        #expect(ClientScope.flow(userID: alice, scope: "a") != ClientScope.flow(userID: UUID(), scope: "a"))
    }
}

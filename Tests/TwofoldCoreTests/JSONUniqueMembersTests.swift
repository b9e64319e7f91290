import Testing
import TwofoldCore
import TwofoldTestSupport

/// Issue T: JSON that names a member twice is refused, however the name is written.
struct JSONUniqueMembersTests {
    @Test(arguments: [
        #"{}"#, #"[]"#, #"{"a":1,"b":[1,2,{"a":2}],"c":{"a":null}}"#, #" {"a" : "x\"y" , "a\\" : true } "#,
        #"{"\ud83d\ude00":1,"\ud83d\ude01":2}"#, #""text""#, "12", #"{"a":{"b":{"c":[[[]]]}}}"#,
    ])
    func uniqueMembersPass(_ json: String) throws {
        try JSONUniqueMembers.check(Array(json.utf8))
    }

    @Test(arguments: [
        (#"{"a":1,"a":2}"#, "a"), (#"{"alg":"ES256","\u0061lg":"none"}"#, "alg"),
        (#"{"x":[{"k":1,"k":1}]}"#, "k"), (#"{"\ud83d\ude00":1,"😀":2}"#, "😀"), (#"{"a\/b":1,"a/b":2}"#, "a/b"),
    ])
    func aMemberNamedTwiceIsRefused(_ json: String, _ name: String) {
        #expect(throws: JSONUniqueMembers.Failure.duplicate(name)) { try JSONUniqueMembers.check(Array(json.utf8)) }
    }

    @Test(arguments: [
        "", "{", #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, #"{"a":1 "b":2}"#, #"["#, #""\x""#, #""\u12""#, #"{} {}"#,
        String(repeating: "[", count: 40) + String(repeating: "]", count: 40),
    ])
    func malformedIsRefused(_ json: String) {
        #expect(throws: JSONUniqueMembers.Failure.malformed) { try JSONUniqueMembers.check(Array(json.utf8)) }
    }

    @Test func randomBytesNeverTrap() {
        var random = SplitMix64(seed: 8259)
        let alphabet = Array(#"{}[]:,"\ua0 1tn"#.utf8)
        for _ in 0..<20_000 {
            let count = Int(random.next() % 40)
            let bytes = (0..<count).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
            _ = try? JSONUniqueMembers.check(bytes)
        }
    }
}

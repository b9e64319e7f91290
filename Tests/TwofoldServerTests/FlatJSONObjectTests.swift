import Foundation
import Testing
import TwofoldAPI

@testable import TwofoldServer

/// The quick read of a second-step body answers what `JSONDecoder` answers, or leaves the body
/// to it.
struct FlatJSONObjectTests {
    private static func flat(_ body: String) -> TOTPValidateRequest? {
        var body = body
        return body.withUTF8 { FlatJSONObject(UnsafeRawBufferPointer($0)).flatMap(TOTPValidateRequest.init(flat:)) }
    }

    private static func decoded(_ body: String) -> TOTPValidateRequest? {
        try? JSONDecoder().decode(TOTPValidateRequest.self, from: Data(body.utf8))
    }

    private static func same(_ a: TOTPValidateRequest?, _ b: TOTPValidateRequest?) -> Bool {
        a?.tempToken == b?.tempToken && a?.code == b?.code && a?.trustDevice == b?.trustDevice
    }

    /// Bodies of the simple shape, as clients send them.
    @Test(arguments: [
        #"{"tempToken":"tf_abc-DEF_123","code":"123456"}"#,
        #"{"code":"123 456","tempToken":"t"}"#,
        " {\"tempToken\" : \"t\" ,\t\"code\":\"1\",\r\n  \"trustDevice\": true } ",
        #"{"tempToken":"t","code":"1","trustDevice":false}"#,
        #"{"tempToken":"t","code":"1","trustDevice":null}"#,
        #"{"tempToken":"t","code":"1","other":"x","flag":null}"#,
        #"{"tempToken":"","code":""}"#,
    ])
    func readsASimpleBodyAsJSONDecoderDoes(body: String) throws {
        let flat = try #require(Self.flat(body))
        #expect(Self.same(flat, Self.decoded(body)))
    }

    /// Anything else goes to `JSONDecoder`, which reads it or names what is wrong.
    @Test(arguments: [
        #"{"tempToken":"t\"x","code":"1"}"#,  // an escape
        #"{"tempToken":"t\u0041","code":"1"}"#,
        #"{"tempToken":"café","code":"1"}"#,  // not ASCII
        #"{"tempToken":"t","code":123456}"#,  // a number
        #"{"tempToken":"t","code":"1","trustDevice":"yes"}"#,  // a string for a boolean
        #"{"tempToken":"t","code":"1","trustDevice":1}"#,
        #"{"tempToken":"t","code":"1","extra":[1]}"#,  // an array
        #"{"tempToken":"t","code":"1","extra":{}}"#,  // an object
        #"{"tempToken":"t","tempToken":"u","code":"1"}"#,  // a name twice
        #"{"tempToken":"t"}"#,  // a member missing
        #"{"tempToken":null,"code":"1"}"#,
        #"{"tempToken":"t","code":"1"} x"#,  // bytes after the object
        #"{"tempToken":"t","code":"1",}"#,  // a trailing comma
        #"{"tempToken":"t" "code":"1"}"#,
        #"{"tempToken":"t","code":"1""#,
        #"{"tempToken":"t","code":"1"}}"#,
        #"{"tempToken":"t","code":"1","trustDevice":tru}"#,
        #"{"tempToken":"t","code":"1","trustDevice":trueish}"#,
        "{\"tempToken\":\"t\",\"code\":\"1\u{7}\"}",  // a control character
        "\u{FEFF}{\"tempToken\":\"t\",\"code\":\"1\"}",  // a byte-order mark
        "[]", "", "{", "{}", "null", #""tempToken""#,
    ])
    func leavesEveryOtherBodyToJSONDecoder(body: String) {
        #expect(Self.flat(body) == nil)
    }
}

import Foundation
import TwofoldAPI
import Vapor

extension Request {
    /// The body as `T`, as `content.decode` reads it, with a JSON body (`application/json`)
    /// read by one shared decoder: Vapor looks its decoder up for every request (a global lock
    /// and parsing the media type), which the second step of every sign-in does not need.
    /// Other media types (and a missing body) go through `content.decode` and its answers.
    func decodeJSONBody<T: Decodable>(_ type: T.Type) throws -> T {
        guard let contentType = headers.first(name: .contentType), Self.isJSON(contentType),
            let body = body.data
        else { return try content.decode(T.self) }
        return try Self.jsonDecoder.decode(T.self, from: body)
    }

    /// `application/json`, with or without parameters, in any case, with spaces or tabs
    /// around it (read byte by byte: Foundation's trimming goes through `NSString`).
    static func isJSON(_ contentType: String) -> Bool {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var type = contentType.utf8.prefix { $0 != UInt8(ascii: ";") }[...]
        while let first = type.first, isSpace(first) { type = type.dropFirst() }
        while let last = type.last, isSpace(last) { type = type.dropLast() }
        let lowercased = type.lazy.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 }
        return lowercased.elementsEqual("application/json".utf8)
    }

    /// The wire protocol's decoder (`Wire.decoder()`).
    private static let jsonDecoder = Wire.decoder()
}

import Foundation
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

    /// `application/json`, with or without parameters, in any case.
    private static func isJSON(_ contentType: String) -> Bool {
        let type = contentType.split(separator: ";", maxSplits: 1).first ?? ""
        return type.trimmingCharacters(in: .whitespaces).lowercased() == "application/json"
    }

    /// The decoder Vapor configures for JSON (ISO-8601 dates).
    private static let jsonDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}

import Foundation

/// The fixed parts of the wire protocol, defined once for the server, the tests and clients:
/// how JSON bodies are written and read, the media types, and the names of the headers and
/// cookies the protocol uses.
public enum Wire {
    /// The encoder of every JSON body: ISO-8601 dates, sorted keys (a stable order), slashes
    /// unescaped. A new one each time: an encoder is a class that a caller may configure.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// The decoder of every JSON body: ISO-8601 dates.
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// The media type of a JSON request or answer.
    public static let json = "application/json"

    /// The names of the headers the protocol gives a meaning.
    public enum Header {
        /// `Bearer <access token>` on every signed-in endpoint.
        public static let authorization = "Authorization"
        /// A remembered device's token on `POST /auth/login` (`trustedDeviceToken` of a second step).
        public static let trustedDevice = "X-Trusted-Device"
        /// The request's id, chosen by the client or made by the server, echoed in the answer
        /// and carried by the server's log lines.
        public static let requestID = "X-Request-ID"
        /// Seconds to wait before trying again, on `429` and `503` (also `retryAfter` in the problem).
        public static let retryAfter = "Retry-After"
        public static let contentType = "Content-Type"
    }

    /// The names of the cookies the server sets.
    public enum Cookie {
        /// A remembered device's token, the twin of `Header.trustedDevice` for browsers.
        public static let trustedDevice = "twofold_trusted_device"
    }
}

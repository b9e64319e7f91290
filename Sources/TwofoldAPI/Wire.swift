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

    /// The decoder of an access token's claims (a JWT's payload): its dates are seconds since
    /// 1970 (RFC 7519's NumericDate), not ISO-8601.
    public static func tokenClaimsDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
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
        /// This device's token for the account (`deviceToken` of a sign-in) on
        /// `POST /auth/login`: its password sign-ins stay open while strangers guess elsewhere.
        public static let deviceToken = "X-Device-Token"
        /// The request's id, chosen by the client or made by the server, echoed in the answer
        /// and carried by the server's log lines.
        public static let requestID = "X-Request-ID"
        /// Seconds to wait before trying again, on `429` and `503` (also `retryAfter` in the problem).
        public static let retryAfter = "Retry-After"
        public static let contentType = "Content-Type"
        /// A client-made key (8 to 255 visible characters) on a change: the same key with the same
        /// request within 24 hours gets the first answer again and changes nothing.
        public static let idempotencyKey = "Idempotency-Key"
        /// `true` on an answer given again for an `Idempotency-Key` seen before.
        public static let idempotentReplayed = "Idempotent-Replayed"
        /// The pages' CSRF token, which the pages' script sends with the browser's session cookie
        /// in place of `Authorization` (the token is in every page's `csrf` field).
        public static let csrfToken = "X-CSRF-Token"
    }

    /// The cookies the server sets. Each is `HttpOnly`, `SameSite=Strict` and `Path=/` (so the
    /// pages at the root and the API under `/api/` both see it); `Secure` and named with the
    /// `__Host-` prefix unless the server runs for a browser on this machine over plain HTTP
    /// (`http://localhost`), where a browser may drop a `Secure` cookie.
    public enum Cookie {
        /// A remembered device's token, the twin of `Header.trustedDevice` for browsers.
        public static let trustedDevice = "twofold_trusted_device"
        /// This browser's device token (`Header.deviceToken`'s twin), set at every sign-in.
        public static let device = "twofold_device"
        /// A browser's session (the pages'): revoked by signing out like any session.
        public static let session = "twofold_session"
        /// The prefix a `Secure` cookie's name carries: the browser then refuses it unless it
        /// came over HTTPS, from this host, for the whole site.
        public static let securePrefix = "__Host-"

        /// `name` as set by a server whose cookies are `secure` or not.
        public static func name(_ name: String, secure: Bool) -> String { secure ? securePrefix + name : name }
    }
}

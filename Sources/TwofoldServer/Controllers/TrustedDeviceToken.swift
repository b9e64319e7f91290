import Vapor

/// How a remembered device's token travels: the `X-Trusted-Device` header, or its cookie twin.
extension Request {
    /// The remembered-device token a request carries: the header, else the cookie.
    var trustedDeviceToken: String? {
        headers.first(name: TrustedDeviceService.header) ?? cookies[TrustedDeviceService.cookie]?.string
    }
}

extension HTTPCookies.Value {
    /// The cookie twin of a remembered-device token: secure, HTTP-only, sent only to the sign-in
    /// endpoints.
    static func trustedDevice(_ token: String, lifetime: TimeInterval) -> HTTPCookies.Value {
        HTTPCookies.Value(
            string: token, maxAge: Int(lifetime), path: "/api/v1/auth", isSecure: true, isHTTPOnly: true,
            sameSite: .strict)
    }
}

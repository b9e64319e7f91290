import Foundation
import TwofoldAPI
import Vapor

/// The attributes of every cookie the server sets (`Wire.Cookie`), decided once from where it
/// runs: `HttpOnly`, `SameSite=Strict`, `Path=/` always; `Secure` with the `__Host-` name
/// prefix unless the server runs in development and every origin it serves is a browser on this
/// machine over plain HTTP (`http://localhost`, `http://127.0.0.1`, `http://[::1]`), where
/// browsers may drop a `Secure` cookie (`API.md`: "Secure outside localhost").
struct CookieRules: Sendable, Equatable {
    let secure: Bool

    init(secure: Bool) { self.secure = secure }

    /// From the origins the server's pages and passkeys are served at: a production server's
    /// cookies are always `Secure`, whatever its origins say.
    init(origins: [String], production: Bool) {
        secure = production || origins.isEmpty || !origins.allSatisfy(Self.isLocalHTTP)
    }

    static func isLocalHTTP(_ origin: String) -> Bool {
        guard let url = URLComponents(string: origin), url.scheme == "http", let host = url.host else { return false }
        return ["localhost", "127.0.0.1", "[::1]", "::1"].contains(host.lowercased())
    }

    /// The name a cookie named `base` carries here.
    func name(_ base: String) -> String { Wire.Cookie.name(base, secure: secure) }

    /// A cookie with the attributes above, kept for `lifetime`.
    func cookie(_ value: String, lifetime: TimeInterval) -> HTTPCookies.Value {
        HTTPCookies.Value(
            string: value, maxAge: Int(lifetime), path: "/", isSecure: secure, isHTTPOnly: true, sameSite: .strict)
    }

    /// The remembered-device cookie's name here.
    var trustedDevice: String { name(Wire.Cookie.trustedDevice) }
    /// The device cookie's name here (`DeviceCookies`).
    var device: String { name(Wire.Cookie.device) }
}

/// How a remembered device's token travels: the `X-Trusted-Device` header, or its cookie twin.
extension Request {
    /// The remembered-device token a request carries: the header, else the cookie by the name
    /// this server sets it under.
    func trustedDeviceToken(_ cookies: CookieRules) -> String? {
        headers.first(name: TrustedDeviceService.header) ?? self.cookies[cookies.trustedDevice]?.string
    }

    /// The device token a request carries (`DeviceCookies`): the header, else the cookie.
    func deviceToken(_ cookies: CookieRules) -> String? {
        headers.first(name: Wire.Header.deviceToken) ?? self.cookies[cookies.device]?.string
    }
}

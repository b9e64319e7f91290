import Fluent
import Foundation
import SQLKit
import TwofoldAPI
import Vapor

/// Remembered devices (seed 002): after a second step with `trustDevice`, the device gets a token
/// (also as a secure, HTTP-only cookie) that lets `POST /auth/login` skip the second step for that
/// user for 30 days (`ProductRules.trustedDeviceLifetime`), until it is revoked.
enum TrustedDeviceService {
    static let header = "X-Trusted-Device"
    static let cookie = "twofold_trusted_device"

    /// Remembers the requesting device for `userID`; returns the token to hand to it.
    static func remember(userID: UUID, request: Request) async throws -> String {
        let now = request.twofold.clock.now()
        let token = SecureToken.generate()
        let agent = request.headers.first(name: .userAgent).map { String($0.prefix(120)) } ?? "Unknown device"
        try await TrustedDevice(
            userID: userID, tokenHash: SecureToken.hash(token), name: agent, now: now,
            expiresAt: now.addingTimeInterval(request.twofold.rules.trustedDeviceLifetime)
        ).create(on: request.db)
        try await AuditLog.record(.trustedDeviceAdded, user: userID, detail: agent, request: request)
        return token
    }

    /// `true` when the request carries a live trusted-device token of `userID` (header or
    /// cookie); marks it used.
    static func recognises(userID: UUID, request: Request) async throws -> Bool {
        guard let token = request.headers.first(name: header) ?? request.cookies[cookie]?.string,
            !token.isEmpty, token.count <= 128
        else { return false }
        let now = request.twofold.clock.now()
        let rows = try await request.sql.raw(
            """
            UPDATE trusted_devices SET last_used_at = \(bind: now)
            WHERE token_hash = \(bind: SecureToken.hash(token)) AND user_id = \(bind: userID)
              AND revoked_at IS NULL AND expires_at > \(bind: now)
            RETURNING id
            """
        ).all()
        return !rows.isEmpty
    }

    /// Revokes every remembered device of a user (password change, second factors reset).
    static func revokeAll(userID: UUID, request: Request) async throws {
        let rows = try await request.sql.raw(
            """
            UPDATE trusted_devices SET revoked_at = \(bind: request.twofold.clock.now())
            WHERE user_id = \(bind: userID) AND revoked_at IS NULL RETURNING id
            """
        ).all()
        if !rows.isEmpty {
            try await AuditLog.record(
                .trustedDeviceRevoked, user: userID, detail: "all \(rows.count) remembered devices", request: request)
        }
    }

    /// The cookie twin of the token: secure, HTTP-only, sent only to the sign-in endpoints.
    static func cookieValue(_ token: String, lifetime: TimeInterval) -> HTTPCookies.Value {
        HTTPCookies.Value(
            string: token, maxAge: Int(lifetime), path: "/api/v1/auth", isSecure: true, isHTTPOnly: true,
            sameSite: .strict)
    }
}

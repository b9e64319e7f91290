import Vapor

/// Behind trusted proxies (`TWOFOLD_TRUST_PROXY=true`): takes the client's address from the
/// `X-Forwarded-For` entry the outermost of them appended, for `Request.clientAddress`.
struct ForwardedClientMiddleware: AsyncMiddleware {
    let trustedHops: Int

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        if let client = Self.forwardedClient(request.headers[.xForwardedFor], trustedHops: trustedHops) {
            request.storage[ForwardedClientKey.self] = client
        }
        return try await next.respond(to: request)
    }

    /// The client in `X-Forwarded-For` values (every header, in order) when `trustedHops`
    /// proxies each append the address they received from: the entry `trustedHops` from the
    /// right. Entries left of it were written by the client (issue S item 4: taking the first
    /// let a client choose the address that throttles see). With fewer entries than hops, the
    /// left-most, which a trusted proxy still wrote.
    static func forwardedClient(_ values: [String], trustedHops: Int) -> String? {
        let entries = values.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        guard !entries.isEmpty else { return nil }
        let entry = entries[max(0, entries.count - trustedHops)]
        guard !entry.isEmpty, entry.count <= 64 else { return nil }
        return entry
    }
}

private struct ForwardedClientKey: StorageKey {
    typealias Value = String
}

extension Request {
    /// The client's address: the socket peer, or, behind trusted proxies, the address
    /// `ForwardedClientMiddleware` found.
    var clientAddress: String? {
        storage[ForwardedClientKey.self] ?? remoteAddress?.ipAddress
    }

    /// Where the request came from, for the audit log and remembered devices.
    var origin: RequestOrigin { RequestOrigin(address: clientAddress, userAgent: userAgent) }

    /// Where a sign-in or registration comes from, for `SignIn` and `Registration`.
    func signInSource(_ cookies: CookieRules) -> SignInSource {
        SignInSource(
            address: clientAddress, trustedDeviceToken: trustedDeviceToken(cookies),
            deviceToken: deviceToken(cookies), origin: origin)
    }

    /// The client's `User-Agent`, cut to the 256 characters sessions and audit events keep.
    var userAgent: String? {
        headers.first(name: .userAgent).map { String($0.prefix(256)) }
    }
}

import Crypto
import Foundation
import TwofoldAPI
import TwofoldCore

/// `Idempotency-Key` (API.md "Idempotent changes"): a change sent again with the same key and
/// the same request within 24 hours gets the first answer again and changes nothing; the same
/// key with another request is `409 conflict`, and so is one that arrives while the first is
/// still being answered. Keys belong to the caller (the signed-in session, else the client
/// address). Key and request are stored as keyed hashes (the request may hold a password), the
/// answer sealed (it may hold tokens). One conditional insert claims a key, so of parallel
/// requests with one key exactly one runs.
struct Idempotency: Sendable {
    let store: any IdempotencyStore
    let secrets: SecretBox
    let clock: ServerClock
    /// The key of the keyed hashes, derived once.
    private let macKey: SymmetricKey

    init(store: any IdempotencyStore, secrets: SecretBox, clock: ServerClock) {
        self.store = store
        self.secrets = secrets
        self.clock = clock
        macKey = secrets.lookupKey(purpose: "idempotency")
    }

    /// How long a key's answer is kept.
    static let lifetime: TimeInterval = 24 * 3600
    /// How long a request may take: a claim still unanswered after this belonged to a server
    /// that stopped (`kill -9`, a crash), and the key may be sent again.
    static let lease: TimeInterval = 60

    /// What to do with a request that carries a key.
    enum Start: Sendable {
        /// Run it; its answer is then `finish`ed (or the claim `abandon`ed) under this id.
        case run(UUID)
        /// The first request's answer, to give again.
        case replay(status: Int, contentType: String, body: [UInt8])
    }

    /// A key as API.md allows it: 8 to 255 visible ASCII characters.
    static func isValid(_ key: String) -> Bool {
        (8...255).contains(key.utf8.count) && key.utf8.allSatisfy { (0x21...0x7e).contains($0) }
    }

    /// Claims `key` for `scope` and the request `fingerprint` (method, path and body), or finds
    /// the answer given for it.
    func start(key: String, scope: String, fingerprint: [UInt8]) async throws -> Start {
        guard Self.isValid(key) else {
            throw InputValidation.failure([
                Wire.Header.idempotencyKey: "must be 8 to 255 visible characters (letters, digits, punctuation)"
            ])
        }
        let now = clock.now()
        let claim = IdempotentRequestRecord(
            id: UUID(), keyHash: hash(Array("\(scope)\n\(key)".utf8)), requestHash: hash(fingerprint), status: nil,
            contentType: nil, bodyCiphertext: nil, createdAt: now, expiresAt: now.addingTimeInterval(Self.lifetime))
        guard let held = try await store.claim(claim, now: now, staleBefore: now.addingTimeInterval(-Self.lease))
        else { return .run(claim.id) }
        guard ConstantTime.equals(Array(held.requestHash.utf8), Array(claim.requestHash.utf8)) else {
            throw Problem(
                status: 409, code: .conflict, title: "Idempotency key used for another request",
                detail: "This Idempotency-Key came with a different request; use a new key for a new request.",
                errors: [Wire.Header.idempotencyKey: "was used for another request"])
        }
        guard let status = held.status, let contentType = held.contentType, let sealed = held.bodyCiphertext else {
            throw Problem(
                status: 409, code: .conflict, title: "Still being answered",
                detail: "A request with this Idempotency-Key is still being answered; try again in a moment.",
                retryAfter: 1)
        }
        return .replay(status: status, contentType: contentType, body: try secrets.open(sealed, boundTo: held.id))
    }

    /// Keeps the answer of the request claimed as `id`.
    func finish(_ id: UUID, status: Int, contentType: String, body: [UInt8]) async throws {
        try await store.complete(
            id: id, status: status, contentType: contentType, bodyCiphertext: try secrets.seal(body, boundTo: id))
    }

    /// Gives up the claim `id`: its request failed on the server's side, so nothing is kept and
    /// the key may be sent again.
    func abandon(_ id: UUID) async throws {
        try await store.release(id: id)
    }

    private func hash(_ bytes: [UInt8]) -> String {
        Base64URL.encode(
            Data(HMAC<SHA256>.authenticationCode(for: bytes, using: macKey)))
    }
}

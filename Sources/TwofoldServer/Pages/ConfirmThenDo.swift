import Foundation
import TwofoldAPI
import Vapor

/// What a page asks once before a change that cannot be undone with a click: the question, what
/// it means, and the button that does it. Without script: the answer is the same form again,
/// with `confirmed=1`.
struct Confirmation {
    let question: String
    let detail: String
    let button: String
}

/// A change a step-up interrupted: its form's path and the fields it carried, so that once the
/// person confirmed it's them, the change is made, not asked for again.
///
/// The step-up page carries it in two hidden fields (`then`, `thenFields`). It is safe to take
/// back from the browser: the path must be one of `resumable` with identifier-like parameters,
/// only `carried` fields go along, and the change is then sent to the server as the person's
/// own form (their session, their CSRF token), so every rule of the change is asked again.
struct PendingChange: Sendable, Equatable {
    let path: String
    let fields: [String: String]

    /// The forms a step-up may complete, each with what it does as the step-up page says it
    /// ("Once you have, …").
    static let resumable: [(page: Page, words: String)] = [
        (Pages.totpSetup, "you go on to set up the authenticator app"),
        (Pages.totpRemove, "the authenticator app is turned off"),
        (Pages.backupCodesRegenerate, "new backup codes are made"),
        (Pages.passkeyRename, "the passkey is renamed"), (Pages.passkeyDelete, "the passkey is deleted"),
        (Pages.codesSetup, "the code to turn the codes on is sent"),
        (Pages.codesDisable, "the codes are turned off"), (Pages.forgetDevice, "the device is forgotten"),
        (Pages.sessionSignOut, "that session is signed out"), (Pages.deviceRemove, "the device is removed"),
        (Pages.signOutEverywhere, "every session is signed out"),
        (Pages.adminUnlock, "the account is unlocked"),
        (Pages.adminResetMFA, "every sign-in method of the account is removed"),
        (Pages.adminRecoveryDecide, "your decision on the request is recorded"),
    ]
    /// The fields that go along (never a password, a code or a token).
    static let carried: Set<String> = ["confirmed", "name", "phoneNumber", "decision", "note"]

    /// What the change does, in the step-up page's words.
    let words: String

    init?(path: String?, fields: [String: String]) {
        guard let path, path.utf8.count <= 512,
            let words = Self.resumable.first(where: { Self.path(path, matches: $0.page) })?.words
        else { return nil }
        self.path = path
        self.words = words
        self.fields = fields.filter { Self.carried.contains($0.key) && $0.value.utf8.count <= 8192 }
    }

    /// The change `request` (a form a step-up was asked for) was making.
    init?(refused request: Request) {
        var fields: [String: String] = [:]
        for name in Self.carried {
            if let value = try? request.content.get(String.self, at: name) { fields[name] = value }
        }
        self.init(path: request.url.path, fields: fields)
    }

    /// The change the step-up page's form carried back (`thenFields`, form-encoded).
    init?(then path: String?, fields encoded: String?) {
        let fields = encoded.flatMap { try? URLEncodedFormDecoder().decode([String: String].self, from: $0) }
        self.init(path: path, fields: fields ?? [:])
    }

    /// The hidden fields that carry it through the step-up page's forms.
    var hiddenFields: Markup {
        """
        <input type="hidden" name="then" value="\(path)">\
        <input type="hidden" name="thenFields" value="\(Self.encoded(fields))">
        """
    }

    /// `path` is `page`'s: its constant parts the same, each parameter a non-empty identifier
    /// (letters, digits, `-`, `_`: UUIDs and base64url passkey ids), so nothing else can ride in.
    static func path(_ path: String, matches page: Page) -> Bool {
        guard page.method == .post, path.hasPrefix("/") else { return false }
        let parts = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        let template = EndpointComponent.parse(page.path)
        guard parts.count == template.count else { return false }
        return zip(template, parts).allSatisfy { component, part in
            switch component {
            case .constant(let text): return text == part
            case .parameter:
                return !part.isEmpty && part.count <= 256
                    && part.unicodeScalars.allSatisfy {
                        ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                            || $0 == "-" || $0 == "_"
                    }
            }
        }
    }

    /// `fields` as a form's body carries them.
    static func encoded(_ fields: [String: String]) -> String {
        (try? URLEncodedFormEncoder().encode(fields)) ?? ""
    }
}

extension StepUpPages {

    /// Makes `change` as the person's own form would, now that the step-up it waited for is done:
    /// the same session cookie and CSRF token, through every middleware and rule again.
    func resume(_ change: PendingChange, after request: Request, csrf: String) async throws -> Response {
        var fields = change.fields
        fields["csrf"] = csrf
        var headers = request.headers
        headers.replaceOrAdd(name: .contentType, value: "application/x-www-form-urlencoded")
        headers.remove(name: .contentLength)
        let inner = Request(
            application: request.application, method: .POST, url: URI(path: change.path), version: request.version,
            headers: headers, collectedBody: ByteBuffer(string: PendingChange.encoded(fields)),
            remoteAddress: request.remoteAddress, logger: request.logger, on: request.eventLoop)
        return try await request.application.responder.respond(to: inner).get()
    }
}

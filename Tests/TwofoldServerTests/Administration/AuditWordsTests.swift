import Testing

@testable import TwofoldServer

/// The audit log in words (issue W item 7): an administrator reads what happened, not a code.
@Suite struct AuditWordsTests {
    @Test func eventsAndMethodsAreWords() {
        #expect(AuditWords.event("login.second_factor_required") == "Password accepted; second step asked")
        #expect(AuditWords.event("recovery.approved") == "Recovery approved")
        #expect(AuditWords.event("something.new") == "something.new")
        #expect(AuditWords.detail("pwd+backup") == "password and a backup code")
        #expect(AuditWords.detail("pwd+totp+hwk") == "password, an authenticator-app code and a device key")
        #expect(AuditWords.detail("pwd") == "password")
        // Anything else is left as written.
        #expect(AuditWords.detail("request 1234 with a document") == "request 1234 with a document")
        #expect(AuditWords.detail("a+b") == "a+b")
    }
}

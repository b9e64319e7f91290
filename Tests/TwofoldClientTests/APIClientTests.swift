import Foundation
import Testing
import TwofoldAPI
import TwofoldClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `APIClient` against a transport that records what it is sent and answers as told: requests
/// are built from the endpoints of `API`, answers read by their declared types and statuses.
@Suite struct APIClientTests {
    /// Records each request and answers with `answer`.
    final class Recorder: Transport, @unchecked Sendable {
        // Safe: `requests` is read and written under `lock`.
        private let lock = NSLock()
        private var requests: [URLRequest] = []
        let answer: @Sendable (URLRequest) -> HTTPAnswer

        init(_ answer: @escaping @Sendable (URLRequest) -> HTTPAnswer) { self.answer = answer }

        func send(_ request: URLRequest) async throws -> HTTPAnswer {
            lock.withLock { requests.append(request) }
            return answer(request)
        }

        var last: URLRequest? { lock.withLock { requests.last } }
    }

    static func json(_ status: Int, _ text: String, type: String = "application/json") -> HTTPAnswer {
        HTTPAnswer(status: status, headers: ["Content-Type": type], body: Data(text.utf8))
    }

    static let user = #"""
        {"id":"3F2504E0-4F89-11D3-9A0C-0305E82C3301","username":"pat","email":"pat@example.com",
         "role":"user","status":"active","createdAt":"2026-11-24T09:00:00Z"}
        """#

    @Test func aResourceRequestEscapesItsParameterOnceUnderTheBasePath() async throws {
        let recorder = Recorder { _ in Self.json(200, #"{"success":true}"#) }
        let client = APIClient(baseURL: URL(string: "https://example.com/twofold")!, transport: recorder)
        _ = try await client.send(API.Passkeys.delete, "a b/ü?x%#", bearer: "token")
        let request = try #require(recorder.last)
        #expect(
            request.url?.absoluteString
                == "https://example.com/twofold/api/v1/2fa/passkey/credentials/a%20b%2F%C3%BC%3Fx%25%23")
        #expect(request.httpMethod == "DELETE")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer token")
        #expect(request.httpBody == nil && request.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    /// `.` and `..` cannot become steps in the path, `;` is no parameter separator, and an
    /// empty value is refused before anything is sent.
    @Test func noParameterValueChangesWhichPathIsAsked() async throws {
        let recorder = Recorder { _ in Self.json(200, #"{"success":true}"#) }
        let client = APIClient(baseURL: URL(string: "http://localhost/")!, transport: recorder)
        for (value, segment) in [(".", "%2E"), ("..", "%2E%2E"), ("a;b", "a%3Bb"), ("...", "...")] {
            _ = try await client.send(API.Auth.revokeSession, value, bearer: "t")
            #expect(recorder.last?.url?.absoluteString == "http://localhost/api/v1/auth/sessions/\(segment)")
        }
        let before = recorder.last
        await #expect(throws: MissingResource.self) { try await client.send(API.Auth.revokeSession, "", bearer: "t") }
        #expect(recorder.last == before, "nothing was sent")
    }

    /// Header names in any case are one header; the call's bearer token wins over the client's.
    @Test func headersMergeWhateverTheirCase() async throws {
        let recorder = Recorder { _ in Self.json(200, #"{"success":true}"#) }
        let client = APIClient(
            baseURL: URL(string: "http://localhost/")!, transport: recorder,
            headers: ["user-agent": "client/1", "authorization": "Bearer old"])
        _ = try await client.send(API.Auth.logoutAll, bearer: "new", headers: ["User-Agent": "call/2"])
        let request = try #require(recorder.last)
        #expect(request.value(forHTTPHeaderField: "User-Agent") == "call/2")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer new")
    }

    @Test func aBodyIsWrittenByTheWireEncoder() async throws {
        let recorder = Recorder { _ in Self.json(200, #"{"success":true}"#) }
        let client = APIClient(baseURL: URL(string: "http://127.0.0.1:8080/")!, transport: recorder)
        _ = try await client.send(API.Auth.logout, RefreshRequest(refreshToken: "r/1"))
        let request = try #require(recorder.last)
        #expect(request.url?.absoluteString == "http://127.0.0.1:8080/api/v1/auth/logout")
        #expect(request.httpMethod == "POST")
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(String(decoding: try #require(request.httpBody), as: UTF8.self) == #"{"refreshToken":"r/1"}"#)
    }

    @Test func queryValuesAreEscapedSoThatNoneReadsAsSyntax() async throws {
        let recorder = Recorder { _ in Self.json(200, #"{"users":[]}"#) }
        let client = APIClient(baseURL: URL(string: "http://localhost:8080")!, transport: recorder)
        _ = try await client.send(
            API.Admin.users, bearer: "t", query: [URLQueryItem(name: "search", value: "a+b&c=d é")])
        #expect(
            recorder.last?.url?.absoluteString
                == "http://localhost:8080/api/v1/admin/users?search=a%2Bb%26c%3Dd%20%C3%A9")
    }

    @Test func aTypedQueryGoesOutAsItsItems() async throws {
        let recorder = Recorder { _ in Self.json(200, #"{"events":[]}"#) }
        let client = APIClient(baseURL: URL(string: "http://localhost")!, transport: recorder)
        let id = UUID(uuidString: "3F2504E0-4F89-11D3-9A0C-0305E82C3301")!
        _ = try await client.send(
            API.Admin.audit, bearer: "t", query: AuditQuery(userId: id, type: "login.failed", page: PageQuery(limit: 5))
        )
        #expect(
            recorder.last?.url?.absoluteString
                == "http://localhost/api/v1/admin/audit?userId=3F2504E0-4F89-11D3-9A0C-0305E82C3301&type=login.failed&limit=5"
        )
    }

    @Test func eachEndpointsOwnSuccessStatusesAreAnswers() async throws {
        let created = Recorder { _ in Self.json(201, #"{"user":\#(Self.user)}"#) }
        let client = APIClient(baseURL: URL(string: "http://localhost")!, transport: created)
        let registered = try await client.send(
            API.Auth.register, RegisterRequest(username: "pat", email: "pat@example.com", password: "p"))
        #expect(registered.user.username == "pat")

        let accepted = Recorder { _ in
            Self.json(
                202,
                #"{"success":true,"nextAllowedAt":"2026-11-24T09:01:00Z","maskedDestination":"p•••@example.com","expiresAt":"2026-11-24T09:05:00Z"}"#
            )
        }
        let outcome = try await APIClient(baseURL: URL(string: "http://localhost")!, transport: accepted).send(
            API.Account.changeEmail, EmailChangeRequest(email: "pat@example.com"), bearer: "t")
        guard case .codeSent(let sent) = outcome else {
            Issue.record("a code sent read as a change")
            return
        }
        #expect(sent.maskedDestination == "p•••@example.com")

        // 201 is not a success of an endpoint that answers 200.
        let odd = Recorder { _ in Self.json(201, #"{"success":true}"#) }
        await #expect(throws: APIError.self) {
            try await APIClient(baseURL: URL(string: "http://localhost")!, transport: odd).send(
                API.Auth.logoutAll, bearer: "t")
        }
    }

    @Test func aRefusalCarriesTheProblemsFields() async throws {
        let locked = Recorder { _ in
            HTTPAnswer(
                status: 429,
                headers: ["content-type": "application/problem+json; charset=utf-8", "Retry-After": "30"],
                body: Data(
                    #"{"type":"https://twofold.dev/problems/locked","title":"Locked","status":429,"code":"locked","attemptsRemaining":0,"retryAfter":30,"lockoutUntil":"2026-11-24T09:05:00Z"}"#
                        .utf8))
        }
        let client = APIClient(baseURL: URL(string: "http://localhost")!, transport: locked)
        do {
            _ = try await client.send(API.Auth.logoutAll, bearer: "t")
            Issue.record("a refusal read as an answer")
        } catch let error as APIError {
            #expect(error.status == 429 && error.code == .locked)
            #expect(error.attemptsRemaining == 0 && error.retryAfter == 30)
            #expect(error.lockoutUntil == Date(timeIntervalSince1970: 1_795_511_100))
        }

        // A gateway's page is no problem document: the status alone, and `Retry-After`.
        let gateway = Recorder { _ in
            HTTPAnswer(
                status: 503, headers: ["Content-Type": "text/html", "Retry-After": "5"], body: Data("<h1>".utf8))
        }
        do {
            _ = try await APIClient(baseURL: URL(string: "http://localhost")!, transport: gateway).send(
                API.Operations.health)
            Issue.record("a gateway page read as an answer")
        } catch let error as APIError {
            #expect(error.status == 503 && error.problem == nil && error.retryAfter == 5)
        }
    }

    @Test func anAnswerThatIsNotTheDeclaredTypeIsUnreadableNotACrash() async throws {
        let wrong = Recorder { _ in Self.json(200, #"{"unexpected":1}"#) }
        await #expect(throws: UnreadableAnswer.self) {
            try await APIClient(baseURL: URL(string: "http://localhost")!, transport: wrong).send(
                API.Auth.logoutAll, bearer: "t")
        }
    }
}

import Foundation
import Synchronization
import Testing
import TwofoldAPI
import TwofoldTestSupport

/// The document's request bodies say what `API`'s body types read: for every endpoint with a
/// JSON body, the schema's members are the members the type decodes, and its `required` list is
/// the members the type cannot do without. The document and the types are kept by hand side by
/// side; this is what keeps them from drifting.
@Suite struct OpenAPIBodyTests {
    /// Each operation's JSON request body as the document states it: its members (those of any
    /// `anyOf` branch too) and the ones it requires.
    static let script = """
        import json, sys, yaml
        document = yaml.safe_load(open(sys.argv[1]))
        def resolve(node):
            while isinstance(node, dict) and "$ref" in node:
                target = document
                for part in node["$ref"].lstrip("#/").split("/"):
                    target = target[part]
                node = target
            return node
        def shape(schema):
            schema = resolve(schema)
            if "properties" not in schema or "oneOf" in schema:
                return None
            return {"members": sorted(schema["properties"]), "required": sorted(schema.get("required", []))}
        bodies, answers = {}, {}
        for path, item in document["paths"].items():
            for method, operation in item.items():
                if not isinstance(operation, dict):
                    continue
                route = method.upper() + " " + path
                body = resolve(operation.get("requestBody"))
                if body:
                    bodies[route] = shape(body["content"]["application/json"]["schema"])
                for status, answer in sorted(operation.get("responses", {}).items()):
                    answer = resolve(answer)
                    content = answer.get("content", {}).get("application/json")
                    if status.startswith("2") and content:
                        answers[route] = shape(content["schema"])
                        break
        print(json.dumps({"bodies": bodies, "answers": answers}))
        """

    struct DocumentedBody: Decodable {
        let members: [String]
        let required: [String]
    }

    struct Document: Decodable {
        /// `nil` for a schema that is not one object (`oneOf`, no `properties`).
        let bodies: [String: DocumentedBody?]
        let answers: [String: DocumentedBody?]
    }

    /// The document as the script reads it: read once for both tests (each process started
    /// while the whole suite runs in parallel is one more `fork`).
    static func document() throws -> Document? {
        guard let python = TestPython.find() else { return nil }
        return try parsed(python).get()
    }

    private static let cache = Mutex<Result<Document, any Error>?>(nil)

    private static func parsed(_ python: ExternalTool) -> Result<Document, any Error> {
        cache.withLock { cached in
            if let cached { return cached }
            let result = Result {
                let output = try python.run([
                    "-c", script, BuildProducts.repositoryRoot.appendingPathComponent("docs/openapi.yaml").path,
                ])
                guard output.status == 0 else { throw ScriptFailure(text: output.errorText) }
                return try JSONDecoder().decode(Document.self, from: output.standardOutput)
            }
            cached = result
            return result
        }
    }

    /// Every problem code `ErrorCode` declares is in the document's list of them (`Problem.code`'s
    /// enum), so a client that checks answers against the document reads each one.
    @Test func everyErrorCodeIsInTheDocumentsList() throws {
        let root = BuildProducts.repositoryRoot
        let source = try String(
            contentsOf: root.appendingPathComponent("Sources/TwofoldAPI/ErrorCode.swift"), encoding: .utf8)
        let codes = source.matches(of: /ErrorCode\(rawValue: "([a-z_]+)"\)/).map { String($0.output.1) }
        #expect(codes.count > 20, "the codes were read")
        let document = try String(contentsOf: root.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        let listed = Set(document.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        #expect(codes.filter { !listed.contains("- \($0)") } == [])
    }

    struct ScriptFailure: Error, CustomStringConvertible {
        let text: String
        var description: String { "the script failed: \(text)" }
    }

    @Test func eachRequestSchemaNamesTheMembersItsTypeReads() throws {
        guard let document = try Self.document() else { return }
        let documented = document.bodies
        var checked = 0
        for endpoint in API.all {
            guard let type = endpoint.bodyType as? any Decodable.Type, let read = DecodedMembers.of(type) else {
                #expect(
                    documented[endpoint.route] == nil, "\(endpoint.route) takes no JSON body, but the document has one")
                continue
            }
            guard let schema = documented[endpoint.route], let body = schema else {
                Issue.record("\(endpoint.route): \(endpoint.body) reads \(read), the document has no object body")
                continue
            }
            checked += 1
            #expect(
                Set(body.members) == read.all,
                "\(endpoint.route): the document names \(body.members.sorted()), \(endpoint.body) reads \(read)")
            #expect(
                Set(body.required) == read.required,
                "\(endpoint.route): the document requires \(body.required.sorted()), \(endpoint.body) reads \(read)")
        }
        // A check that finds nothing to compare proves nothing.
        #expect(checked >= 30)
    }

    /// Each JSON answer the document describes as one object names the members its Swift type
    /// writes, and requires those it always writes. (Answers of several shapes, `oneOf` in the
    /// document, are checked at run time by `scripts/api_fuzz`.)
    @Test func eachAnswerSchemaNamesTheMembersItsTypeWrites() throws {
        guard let document = try Self.document() else { return }
        var checked = 0
        for endpoint in API.all {
            guard let type = endpoint.answerType as? any Codable.Type, let written = EncodedMembers.of(type),
                let schema = document.answers[endpoint.route], let answer = schema
            else { continue }
            checked += 1
            #expect(
                Set(answer.members) == written.all,
                "\(endpoint.route): the document names \(answer.members.sorted()), \(endpoint.answer) writes \(written)"
            )
            #expect(
                Set(answer.required) == written.always,
                "\(endpoint.route): the document requires \(answer.required.sorted()), \(endpoint.answer) writes \(written)"
            )
        }
        #expect(checked >= 30)
    }

    /// The recorder itself: a type's optional members are optional, its others required.
    @Test func theRecorderTellsRequiredFromOptionalMembers() {
        struct Example: Decodable {
            let name: String
            let count: Int
            let note: String?
            let nested: [String: Int]?
        }
        #expect(
            DecodedMembers.of(Example.self)
                == DecodedMembers(required: ["name", "count"], optional: ["note", "nested"]))
        #expect(DecodedMembers.of(String.self) == nil)
    }
}

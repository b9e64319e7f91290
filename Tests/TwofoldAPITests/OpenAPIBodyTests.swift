import Foundation
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
        bodies = {}
        for path, item in document["paths"].items():
            for method, operation in item.items():
                body = resolve(operation.get("requestBody")) if isinstance(operation, dict) else None
                if not body:
                    continue
                schema = resolve(body["content"]["application/json"]["schema"])
                members = set(schema.get("properties", {}))
                bodies[method.upper() + " " + path] = {
                    "members": sorted(members),
                    "required": sorted(schema.get("required", [])),
                }
        print(json.dumps(bodies))
        """

    struct DocumentedBody: Decodable {
        let members: [String]
        let required: [String]
    }

    @Test func eachRequestSchemaNamesTheMembersItsTypeReads() throws {
        guard let python = TestPython.find() else { return }
        let output = try python.run([
            "-c", Self.script, BuildProducts.repositoryRoot.appendingPathComponent("docs/openapi.yaml").path,
        ])
        #expect(output.status == 0, "\(output.errorText)")
        let documented = try JSONDecoder().decode([String: DocumentedBody].self, from: output.standardOutput)
        var checked = 0
        for endpoint in API.all {
            guard let type = endpoint.bodyType as? any Decodable.Type, let read = DecodedMembers.of(type) else {
                #expect(
                    documented[endpoint.route] == nil, "\(endpoint.route) takes no JSON body, but the document has one")
                continue
            }
            guard let body = documented[endpoint.route] else {
                Issue.record("\(endpoint.route): \(endpoint.body) reads \(read), the document has no body")
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

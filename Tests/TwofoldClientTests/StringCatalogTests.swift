import Foundation
import Testing
import TwofoldTestSupport

/// The SDK's words and its string catalog say the same: every `Words.text(key, english)` in
/// `Sources/TwofoldClient` has its key in `Localizable.xcstrings` with that English, and the
/// catalog keeps no key the code no longer uses. A translator works from the catalog; a sentence
/// changed in code and not there would show the old words to everyone on an Apple platform.
@Suite struct StringCatalogTests {
    static let folder = BuildProducts.repositoryRoot.appendingPathComponent("Sources/TwofoldClient")

    /// Every key the code uses, with its English.
    static func used() throws -> [String: String] {
        var used: [String: String] = [:]
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        for file in files {
            let source = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for match in source.matches(of: /Words\.text\(\s*"([^"]+)",\s*"((?:[^"\\]|\\.)*)"/) {
                let (key, english) = (String(match.1), String(match.2).replacingOccurrences(of: #"\""#, with: "\""))
                #expect(used[key] == nil || used[key] == english, "\(key) has two English texts")
                used[key] = english
            }
        }
        return used
    }

    @Test func theCatalogHasEveryKeyWithItsEnglishAndNoOther() throws {
        let data = try Data(contentsOf: Self.folder.appendingPathComponent("Localizable.xcstrings"))
        let catalog = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(catalog["sourceLanguage"] as? String == "en")
        let strings = try #require(catalog["strings"] as? [String: [String: Any]])
        var english: [String: String] = [:]
        for (key, entry) in strings {
            let localizations = entry["localizations"] as? [String: [String: [String: String]]]
            english[key] = localizations?["en"]?["stringUnit"]?["value"]
        }
        let used = try Self.used()
        #expect(used.count >= 50, "the SDK's sentences are looked up by key")
        #expect(english == used)
    }
}

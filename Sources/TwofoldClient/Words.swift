import Foundation

/// The SDK's words in the person's language. Each sentence has a key and its English, the
/// source language of `Localizable.xcstrings` in this module's bundle; an app's translations
/// are added to that catalog. Where no translation is found (and on Linux, which does not compile
/// string catalogs) the English is used. Placeholders are `{name}`, filled after the lookup, so
/// a translation may put them anywhere.
enum Words {
    /// The sentence under `key` (`english` unless translated), with `values` put in place of
    /// their `{name}`s.
    static func text(_ key: String, _ english: String, _ values: [String: String] = [:]) -> String {
        #if canImport(Darwin)
            var text = NSLocalizedString(key, tableName: nil, bundle: .module, value: english, comment: "")
        #else
            // Linux compiles no string catalog, and `Bundle.module` would stop a binary copied
            // away from its resource bundle (an installed `twofold`): the English is the text.
            var text = english
        #endif
        for (name, value) in values { text = text.replacingOccurrences(of: "{\(name)}", with: value) }
        return text
    }
}

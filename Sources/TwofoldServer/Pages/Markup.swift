import Foundation
import TwofoldCore

/// HTML a page is made of, escaped by type: the literal parts are written here and go in as
/// they are; every `String` interpolated into them is text and goes in escaped; only another
/// `Markup` goes in unescaped. So no page can put a person's text into its HTML unescaped, and
/// none calls an escaping function by hand.
///
/// Why our own small type rather than a library: the pages are a few dozen forms and tables, and
/// string interpolation with a typed builder keeps them readable as HTML, with no dependency
/// beyond the machine's package list (Plot and Leaf are not on it) and no template files to
/// keep in step with their Swift. Literals are `StaticString`, so a `String` made at run time
/// cannot pass for one.
struct Markup: Sendable, Equatable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The HTML, escaped as it was built.
    private(set) var html: String

    private init(rendered html: String) { self.html = html }

    init(stringLiteral literal: StaticString) { html = literal.description }

    init(stringInterpolation: Interpolation) { html = stringInterpolation.html }

    var description: String { html }

    static let empty = Markup(rendered: "")

    var isEmpty: Bool { html.isEmpty }

    static func + (lhs: Markup, rhs: Markup) -> Markup { Markup(rendered: lhs.html + rhs.html) }

    static func += (lhs: inout Markup, rhs: Markup) { lhs.html += rhs.html }

    /// A QR code, drawn as SVG by `QRCode.svg` (numbers and fixed names only, nothing a person typed).
    static func qrCode(_ code: QRCode) -> Markup { Markup(rendered: code.svg()) }

    struct Interpolation: StringInterpolationProtocol {
        fileprivate var html = ""

        init(literalCapacity: Int, interpolationCount: Int) {
            html.reserveCapacity(literalCapacity + interpolationCount * 16)
        }

        mutating func appendLiteral(_ literal: StaticString) { html += literal.description }

        /// Text: escaped.
        mutating func appendInterpolation(_ text: String) { html += Markup.escape(text) }

        mutating func appendInterpolation(_ text: Substring) { html += Markup.escape(String(text)) }

        /// Markup made the same way: as it is.
        mutating func appendInterpolation(_ markup: Markup) { html += markup.html }

        mutating func appendInterpolation(_ number: Int) { html += String(number) }
    }

    /// `text` with the five characters that could end a text or an attribute written as entities.
    /// Scalar by scalar, not character by character: a `<` that a combining or prepended mark
    /// joins into one `Character` (`"\u{0600}<"`) is still a `<` to a browser.
    static func escape(_ text: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped.append(contentsOf: "&amp;".unicodeScalars)
            case "<": escaped.append(contentsOf: "&lt;".unicodeScalars)
            case ">": escaped.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": escaped.append(contentsOf: "&quot;".unicodeScalars)
            case "'": escaped.append(contentsOf: "&#39;".unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }
}

extension Sequence<Markup> {
    /// The parts one after another, `separator` between them.
    func joined(separator: Markup = .empty) -> Markup {
        var result = Markup.empty
        for (index, part) in enumerated() {
            if index > 0 { result += separator }
            result += part
        }
        return result
    }
}

extension QRCode {
    /// The symbol for a terminal, two module rows per text line with Unicode half blocks.
    ///
    /// Terminals draw glyphs in the foreground colour, so on the usual light-on-dark terminal the
    /// light modules must be the glyphs (`darkOnLight: false`, the default) and dark modules the
    /// background; pass `true` for a dark-on-light terminal.
    public func terminalString(border: Int = 2, darkOnLight: Bool = false) -> String {
        let border = max(0, border)
        let range = -border..<(size + border)
        var lines: [String] = []
        for top in stride(from: range.lowerBound, to: range.upperBound, by: 2) {
            var line = ""
            for x in range {
                // The glyph shows the modules that are drawn in the foreground colour.
                let upper = isDark(x: x, y: top) == darkOnLight
                let lower = top + 1 < range.upperBound && isDark(x: x, y: top + 1) == darkOnLight
                switch (upper, lower) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}

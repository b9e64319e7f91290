extension QRCode {
    /// A plain PBM (P1) image, `scale` pixels per module with a quiet zone of `border` modules,
    /// for tools such as image decoders that read bitmaps rather than SVG.
    public func pbm(scale: Int = 4, border: Int = 4) -> String {
        let scale = max(1, scale)
        let border = max(0, border)
        let pixels = (size + border * 2) * scale
        var output = "P1\n\(pixels) \(pixels)\n"
        output.reserveCapacity(output.count + pixels * (pixels * 2 + 1))
        for row in 0..<pixels {
            let y = row / scale - border
            var line = ""
            line.reserveCapacity(pixels * 2)
            for column in 0..<pixels {
                line += isDark(x: column / scale - border, y: y) ? "1 " : "0 "
            }
            output += line + "\n"
        }
        return output
    }
}

extension QRCode {
    /// An SVG drawing of the symbol: one path of unit squares on a white background, with a quiet
    /// zone of `border` modules (4 by the standard). It scales to any size without blurring.
    public func svg(border: Int = 4, moduleSize: Int = 8) -> String {
        let border = max(0, border)
        let dimension = size + border * 2
        var path = ""
        path.reserveCapacity(size * size * 4)
        for y in 0..<size {
            var x = 0
            while x < size {
                guard isDark(x: x, y: y) else {
                    x += 1
                    continue
                }
                // Merge horizontal runs into one rectangle to keep the document small.
                var run = 1
                while isDark(x: x + run, y: y) { run += 1 }
                path += "M\(x + border) \(y + border)h\(run)v1h-\(run)z"
                x += run
            }
        }
        let pixels = dimension * max(1, moduleSize)
        return """
            <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="\(pixels)" height="\(pixels)" \
            viewBox="0 0 \(dimension) \(dimension)" shape-rendering="crispEdges">\
            <rect width="100%" height="100%" fill="#FFFFFF"/>\
            <path d="\(path)" fill="#000000"/></svg>
            """
    }
}

#if canImport(SwiftUI) && os(iOS)
    import CoreImage.CIFilterBuiltins
    import SwiftUI

    /// A QR code of `text` (an `otpauth://` URI) drawn by Core Image, sharp at any size.
    struct QRCodeImage: View {
        let text: String

        var body: some View {
            if let image = Self.image(of: text) {
                Image(uiImage: image)
                    .interpolation(.none)
                    .resizable()
                    .scaledToFit()
                    .padding(12)
                    .background(.white, in: RoundedRectangle(cornerRadius: 12))
            } else {
                Text("The QR code could not be drawn. Enter the key below instead.")
            }
        }

        private static func image(of text: String) -> UIImage? {
            let filter = CIFilter.qrCodeGenerator()
            filter.message = Data(text.utf8)
            filter.correctionLevel = "M"
            guard let output = filter.outputImage else { return nil }
            let scaled = output.transformed(by: CGAffineTransform(scaleX: 10, y: 10))
            guard let image = CIContext().createCGImage(scaled, from: scaled.extent) else { return nil }
            return UIImage(cgImage: image)
        }
    }
#endif

#if canImport(SwiftUI) && canImport(VisionKit) && os(iOS)
    import SwiftUI
    import TwofoldClient
    import TwofoldScreens
    import VisionKit

    /// The camera as a `CodeScanning`: VisionKit's data scanner reading QR codes, each code's
    /// text handed on as it comes into view.
    @MainActor
    final class VisionKitCodeScanner: CodeScanning {
        private let stream: AsyncStream<String>
        fileprivate let continuation: AsyncStream<String>.Continuation

        init() {
            (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(8))
        }

        var isAvailable: Bool {
            get async { DataScannerViewController.isSupported && DataScannerViewController.isAvailable }
        }

        nonisolated func codes() -> AsyncStream<String> { stream }
    }

    /// The live camera view of `scanner`: scanning starts as it appears and stops as it goes.
    private struct DataScannerRepresentable: UIViewControllerRepresentable {
        let scanner: VisionKitCodeScanner

        func makeUIViewController(context: Context) -> DataScannerViewController {
            let controller = DataScannerViewController(
                recognizedDataTypes: [.barcode(symbologies: [.qr])], qualityLevel: .balanced,
                isHighlightingEnabled: true)
            controller.delegate = context.coordinator
            try? controller.startScanning()
            return controller
        }

        func updateUIViewController(_ controller: DataScannerViewController, context: Context) {}

        static func dismantleUIViewController(_ controller: DataScannerViewController, coordinator: Coordinator) {
            controller.stopScanning()
        }

        func makeCoordinator() -> Coordinator { Coordinator(scanner: scanner) }

        @MainActor final class Coordinator: NSObject, DataScannerViewControllerDelegate {
            let scanner: VisionKitCodeScanner
            init(scanner: VisionKitCodeScanner) { self.scanner = scanner }

            func dataScanner(
                _ dataScanner: DataScannerViewController, didAdd addedItems: [RecognizedItem],
                allItems: [RecognizedItem]
            ) {
                for case .barcode(let code) in addedItems {
                    if let text = code.payloadStringValue { scanner.continuation.yield(text) }
                }
            }
        }
    }

    /// Seed 000's QR scanner: the camera, what went wrong with the last code, and "Enter
    /// manually" below; it closes by itself once a code is read, handing the link to `onFound`.
    struct CodeScannerView: View {
        @Bindable var model: CodeScannerModel
        let scanner: VisionKitCodeScanner
        let onFound: @MainActor (DeepLink) -> Void

        var body: some View {
            VStack(spacing: 16) {
                switch model.phase {
                case .scanning:
                    DataScannerRepresentable(scanner: scanner)
                        .clipShape(RoundedRectangle(cornerRadius: 12))
                        .accessibilityLabel("Camera view. Point it at the QR code.")
                case .unavailable:
                    ContentUnavailableView(
                        "Camera unavailable", systemImage: "camera.fill",
                        description: Text("Allow Twofold to use the camera in Settings, or enter the code's text."))
                case .manual:
                    Form {
                        TextField("The code's text or link", text: $model.typed, axis: .vertical)
                            .textInputAutocapitalization(.never)
                            .autocorrectionDisabled()
                        Button("Continue") { model.submitTyped() }.disabled(model.typed.isEmpty)
                    }
                case .found:
                    ProgressView()
                }
                if let problem = model.problem { ProblemText(problem) }
                if model.phase != .manual {
                    Button("Enter manually") { model.enterManually() }
                }
            }
            .padding()
            .navigationTitle("Scan a QR Code")
            .task { await model.scan() }
            .onChange(of: model.phase) { _, phase in
                if case .found(let link) = phase { onFound(link) }
            }
        }
    }

    /// "Scan a QR Code" from This iPhone: the code read opens as a link would, and the scanner
    /// closes.
    struct ScanCodeScreen: View {
        let app: AppModel
        @State private var scanner = VisionKitCodeScanner()
        @State private var model: CodeScannerModel?
        @Environment(\.dismiss) private var dismiss

        var body: some View {
            Group {
                if let model {
                    CodeScannerView(model: model, scanner: scanner) { link in
                        app.open(link)
                        dismiss()
                    }
                }
            }
            .onAppear {
                if model == nil { model = CodeScannerModel(scanner: scanner, server: app.session.client.baseURL) }
            }
        }
    }
#endif

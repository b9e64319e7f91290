#if canImport(SwiftUI) && os(iOS)
    import SwiftUI

    /// What went wrong, in the model's words, shown the same way on every screen.
    struct ProblemText: View {
        let message: String

        init(_ message: String) { self.message = message }

        var body: some View {
            Label(message, systemImage: "exclamationmark.triangle.fill")
                .foregroundStyle(.red)
                .accessibilityLabel("Problem: \(message)")
        }
    }
#endif

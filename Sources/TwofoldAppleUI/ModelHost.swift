#if canImport(SwiftUI) && os(iOS)
    import SwiftUI

    /// Makes a screen's model once, when the screen first appears, and keeps it for the
    /// screen's life: a parent's new body does not make a new model (and lose its state).
    public struct ModelHost<Model: AnyObject, Content: View>: View {
        private let make: @MainActor () -> Model
        private let content: (Model) -> Content
        @State private var model: Model?

        /// A host that makes its model with `make` and shows it with `content`.
        public init(_ make: @escaping @MainActor () -> Model, @ViewBuilder content: @escaping (Model) -> Content) {
            (self.make, self.content) = (make, content)
        }

        public var body: some View {
            if let model {
                content(model)
            } else {
                Color.clear.onAppear { model = make() }
            }
        }
    }
#endif

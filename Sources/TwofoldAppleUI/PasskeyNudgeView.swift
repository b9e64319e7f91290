#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldScreens

    /// Seed 000's passkey nudge: "Sign in faster next time" with a passkey, or "Maybe later".
    public struct PasskeyNudgeView: View {
        @Bindable private var model: PasskeyNudgeModel

        /// The sheet for `model`.
        public init(model: PasskeyNudgeModel) { self.model = model }

        public var body: some View {
            VStack(spacing: 16) {
                Image(systemName: "person.badge.key.fill").font(.system(size: 48)).foregroundStyle(.tint)
                    .accessibilityHidden(true)
                Text("Sign in faster next time").font(.title2.bold())
                Text(
                    "A passkey signs you in with Face ID or Touch ID: no code to type, and nothing a fake site can steal."
                )
                .multilineTextAlignment(.center)
                if let problem = model.problem { ProblemText(problem.message) }
                Button("Create a passkey") { Task { await model.addPasskey() } }
                    .buttonStyle(.borderedProminent)
                Button("Maybe later") { model.maybeLater() }
            }
            .padding()
            .disabled(model.working)
            .presentationDetents([.medium])
        }
    }
#endif

#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldAPI
    import TwofoldScreens

    /// "Confirm it's you" on a `StepUpPrompt`: when the server asks for a factor again before a
    /// change, the methods that can answer, a code (sent first for SMS or email) or the
    /// password, and Confirm or Cancel. The change waits for it.
    public struct StepUpSheet: View {
        @Bindable private var prompt: StepUpPrompt

        /// The sheet for `prompt`'s question.
        public init(prompt: StepUpPrompt) { self.prompt = prompt }

        public var body: some View {
            NavigationStack {
                Form {
                    if let question = prompt.question { answer(question) }
                }
                .navigationTitle("Confirm It's You")
                .navigationBarTitleDisplayMode(.inline)
                .toolbar {
                    ToolbarItem(placement: .cancellationAction) {
                        Button("Cancel") { prompt.cancel() }
                    }
                    ToolbarItem(placement: .confirmationAction) {
                        Button("Confirm") { prompt.confirm() }.disabled(!prompt.canConfirm)
                    }
                }
            }
        }

        @ViewBuilder private func answer(_ question: StepUpPrompt.Question) -> some View {
            Section { Text(question.message) }
            if question.methods.count > 1 {
                Section {
                    Picker(
                        "Confirm with",
                        selection: Binding(get: { [prompt] in prompt.method }, set: { [prompt] in prompt.choose($0) })
                    ) {
                        ForEach(question.methods, id: \.self) { method in
                            Text(Self.title(method)).tag(method)
                        }
                    }
                }
            }
            Section {
                if prompt.method == .password {
                    SecureField("Password", text: $prompt.password)
                        .textContentType(.password)
                        .submitLabel(.done)
                        .onSubmit { prompt.confirm() }
                } else {
                    if prompt.method.isSentCode {
                        Button(prompt.codeSentTo == nil ? "Send Code" : "Send Another Code") {
                            Task { await prompt.sendCode() }
                        }
                        if let sentTo = prompt.codeSentTo { Text("Code sent to \(sentTo)") }
                    }
                    CodeInputView(
                        entry: prompt.code,
                        onType: { [prompt] text in prompt.code.update(text) },
                        onPaste: { [prompt] text in prompt.code.paste(text) })
                }
                if let problem = prompt.problem { ProblemText(problem) }
            }
        }

        private static func title(_ method: FactorMethod) -> String {
            method == .password ? "Password" : SignInModel.title(method)
        }
    }

    #Preview("Confirm it's you") {
        StepUpSheet(prompt: StepUpPrompt())
    }
#endif

#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldAPI
    import TwofoldScreens

    /// "Approve on your phone" (issue Z) on an `ApprovalModel`: the request, the three numbers
    /// to pick from, "Deny" and "This wasn't me". Listens while the screen is shown.
    public struct ApprovalView: View {
        @Bindable private var model: ApprovalModel

        /// The screen for `model`.
        public init(model: ApprovalModel) { self.model = model }

        public var body: some View {
            Form {
                switch model.phase {
                case .idle:
                    Section {
                        Label("No sign-in is waiting for your approval.", systemImage: "checkmark.shield")
                    } footer: {
                        Text("When you sign in somewhere with your password, the request appears here.")
                    }
                case .asking(let request), .working(let request):
                    asking(request)
                case .answered(let status, let words):
                    Section {
                        Label(words, systemImage: status == .approved ? "checkmark.seal.fill" : "xmark.octagon.fill")
                            .foregroundStyle(status == .approved ? .green : .red)
                        Button("Done") { model.done() }
                    }
                }
                if let message = model.message {
                    Section { Text(message).foregroundStyle(.red) }
                }
                if !model.notices.isEmpty {
                    Section("Recent Activity") {
                        ForEach(model.notices) { notice in
                            VStack(alignment: .leading, spacing: 4) {
                                Text(notice.title).font(.headline)
                                Text(notice.body)
                            }
                            .accessibilityElement(children: .combine)
                        }
                    }
                }
            }
            .navigationTitle("Approve Sign-In")
            .disabled(isWorking)
            .overlay { if isWorking { ProgressView() } }
            .task { await model.listen() }
        }

        private var isWorking: Bool {
            if case .working = model.phase { return true }
            return false
        }

        @ViewBuilder private func asking(_ request: PushApprovalDTO) -> some View {
            Section {
                ForEach(ApprovalModel.lines(request), id: \.self) { Text($0) }
            } header: {
                Text("Is this you?")
            }
            Section {
                HStack {
                    ForEach(request.choices, id: \.self) { number in
                        Button(String(number)) { Task { await model.approve(number) } }
                            .font(.largeTitle.monospacedDigit().bold())
                            .frame(maxWidth: .infinity)
                            .buttonStyle(.bordered)
                            .accessibilityLabel("Approve with \(number)")
                    }
                }
            } header: {
                Text("Pick the number on the screen you're signing in to")
            }
            Section {
                Button("Deny", role: .destructive) { Task { await model.deny() } }
                Button("This Wasn't Me", role: .destructive) { Task { await model.notMe() } }
            } footer: {
                Text("“This wasn't me” stops the sign-in and emails you: someone knows your password.")
            }
        }
    }
#endif

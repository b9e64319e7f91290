#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldAPI
    import TwofoldScreens

    /// Seed 000's account recovery on a `RecoveryModel`: the email address and a word for the
    /// reviewer, the code emailed, the review, then the pass from the approval email.
    public struct RecoveryView: View {
        @Bindable private var model: RecoveryModel
        private let onSignedIn: @MainActor (UserDTO) -> Void

        /// Recovery on `model`; `onSignedIn` hears the user the pass signed in.
        public init(model: RecoveryModel, onSignedIn: @escaping @MainActor (UserDTO) -> Void) {
            self.model = model
            self.onSignedIn = onSignedIn
        }

        public var body: some View {
            Form {
                Section { Text(model.stateText) }
                step
                if let problem = model.problem {
                    Section { ProblemText(problem.message) }
                }
            }
            .navigationTitle("Account Recovery")
            .disabled(model.working)
            .overlay { if model.working { ProgressView() } }
            .onChange(of: model.signedIn) { _, user in
                if let user { onSignedIn(user) }
            }
        }

        @ViewBuilder private var step: some View {
            switch model.request?.state {
            case nil where model.fromLink:
                // The approval email's link: nothing happens until the person chooses it.
                Section {
                    Button("Sign In and Set Up a New Method") { Task { await model.redeem() } }
                        .buttonStyle(.borderedProminent)
                    Button("Not Now", role: .cancel) { model.restart() }
                }
            case nil:
                Section {
                    TextField("Email address", text: $model.email)
                        .textContentType(.emailAddress)
                        .keyboardType(.emailAddress)
                        .textInputAutocapitalization(.never)
                        .autocorrectionDisabled()
                    TextField("Anything our reviewer should know", text: $model.message, axis: .vertical)
                        .lineLimit(3...6)
                }
                Section {
                    Button("Send Code") { Task { await model.start() } }.disabled(model.email.isEmpty)
                }
            case .pendingEmail?:
                Section("Code from the email") {
                    CodeInputView(
                        entry: model.code,
                        onType: { [model] text in Task { await model.type(text) } },
                        onPaste: { [model] text in Task { await model.type(text) } })
                }
            case .pendingReview?:
                Section {
                    Button("Check Again") { Task { await model.refresh() } }
                }
            case .approved?:
                Section {
                    TextField("Pass from the approval email", text: $model.pass)
                        .textInputAutocapitalization(.never)
                        .autocorrectionDisabled()
                        .font(.body.monospaced())
                    if let from = model.request?.usableFrom, from > .now {
                        Text("The pass works from \(from.formatted(date: .abbreviated, time: .shortened)).")
                    }
                    Button("Sign In") { Task { await model.redeem() } }.disabled(model.pass.isEmpty)
                }
            case .denied?, .cancelled?, .expired?:
                Section {
                    Button("Start Again") { model.restart() }
                }
            default:
                EmptyView()
            }
        }
    }

    #Preview("Recovery") {
        NavigationStack { RecoveryView(model: ScreenFixtures.recovery(), onSignedIn: { _ in }) }
    }
#endif

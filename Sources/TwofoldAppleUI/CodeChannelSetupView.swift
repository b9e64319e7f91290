#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldAPI
    import TwofoldScreens

    /// SMS or email codes turned on, on a `CodeChannelSetupModel`: the number (for SMS), the code
    /// sent to it with the resend countdown, then the backup codes when this was the first factor.
    public struct CodeChannelSetupView: View {
        @Bindable private var model: CodeChannelSetupModel
        private let screens: ScreenFactory
        @Environment(\.dismiss) private var dismiss

        /// The setup for `model`; `screens` makes the backup codes' model.
        public init(model: CodeChannelSetupModel, screens: ScreenFactory) {
            self.model = model
            self.screens = screens
        }

        private var isSMS: Bool { model.channel == .sms }

        public var body: some View {
            content.navigationTitle(isSMS ? "Text Message Codes" : "Email Codes")
        }

        @ViewBuilder private var content: some View {
            if let done = model.done {
                if let codes = done {
                    ModelHost({ screens.backupCodes(codes) }) { BackupCodesView(model: $0) { dismiss() } }
                } else {
                    ContentUnavailableView {
                        Label(
                            isSMS ? "Text message codes are on" : "Email codes are on", systemImage: "checkmark.shield")
                    } actions: {
                        Button("Done") { dismiss() }.buttonStyle(.borderedProminent)
                    }
                }
            } else {
                form
            }
        }

        private var form: some View {
            Form {
                if isSMS {
                    Section {
                        TextField("Phone number", text: $model.phone)
                            .keyboardType(.phonePad)
                            .textContentType(.telephoneNumber)
                    } footer: {
                        Text("Leave it empty to use the number on your account.")
                    }
                }
                Section {
                    // Redrawn each second: the model's countdown reads the clock.
                    TimelineView(.periodic(from: .now, by: 1)) { _ in
                        Button(sendTitle(wait: model.resendCountdown())) { Task { await model.send() } }
                            .disabled(!model.canSend)
                    }
                }
                if let sentTo = model.sentTo {
                    Section("Enter the code sent to \(sentTo)") {
                        CodeInputView(
                            entry: model.code, isDisabled: model.working,
                            onType: { [model] text in Task { await model.type(text) } },
                            onPaste: { [model] text in Task { await model.type(text) } })
                    }
                }
                if let problem = model.problem {
                    Section { ProblemText(problem.message) }
                }
            }
        }

        private func sendTitle(wait: Int) -> String {
            if model.sentTo == nil { return "Send Code" }
            return wait > 0 ? "Send Another Code in \(wait)s" : "Send Another Code"
        }
    }

    #Preview("SMS codes") {
        NavigationStack {
            CodeChannelSetupView(
                model: CodeChannelSetupModel(security: ScreenFixtures.security(), channel: .sms), screens: .preview())
        }
    }
#endif

#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldAPI
    import TwofoldScreens

    /// Seed 002's challenge screen on a `SignInModel`: a tab per method the account has, the
    /// code input (or the passkey or device-key button), the resend countdown, attempts left and
    /// the lockout countdown, "Remember this device", and the way down the fallback chain.
    struct ChallengeView: View {
        @Bindable var model: SignInModel
        let onRecovery: @MainActor () -> Void

        private var working: Bool { model.phase == .working }

        var body: some View {
            Form {
                if model.tabs.count > 1 {
                    Section { tabs }
                }
                Section {
                    Text(model.instructions)
                    method
                    if let left = model.step?.attemptsRemaining {
                        Label(Self.triesLeft(left), systemImage: "exclamationmark.circle").foregroundStyle(.orange)
                    }
                    if let message = model.message { ProblemText(message) }
                } footer: {
                    if let skew = model.step?.clockSkew, model.method == .totp {
                        Text(
                            "This iPhone's clock is \(Int(abs(skew).rounded())) seconds off, so authenticator codes "
                                + "may be refused. Set the time automatically in Settings.")
                    }
                }
                if model.resendCountdown() != nil {
                    Section { resend }
                }
                if model.canRememberDevice {
                    Section {
                        Toggle("Remember this device for 30 days", isOn: $model.rememberDevice)
                    } footer: {
                        Text("Next time, your password alone signs you in on this iPhone.")
                    }
                }
                Section {
                    Button("Try another way") { Task { await model.tryAnotherWay() } }
                    Button("Recover your account") { onRecovery() }
                    Button("Start over", role: .cancel) { Task { await model.startOver() } }
                }
            }
            .disabled(working)
            .overlay {
                if working { ProgressView().padding().background(.regularMaterial, in: .rect(cornerRadius: 12)) }
            }
        }

        private var tabs: some View {
            let selection = Binding(
                get: { [model] in model.method ?? .totp },
                set: { [model] method in Task { await model.select(method) } })
            return ViewThatFits(in: .horizontal) {
                Picker("Method", selection: selection) { tabItems }.pickerStyle(.segmented)
                Picker("Method", selection: selection) { tabItems }.pickerStyle(.menu)
            }
            .accessibilityLabel("Verification method")
        }

        private var tabItems: some View {
            ForEach(model.tabs, id: \.self) { method in
                Text(SignInModel.title(method)).tag(method)
            }
        }

        /// The chosen method's control, re-read each second while the method is locked.
        @ViewBuilder private var method: some View {
            if model.method == .webauthn {
                Button("Use your passkey", systemImage: "person.badge.key") { Task { await model.usePasskey() } }
                    .buttonStyle(.borderedProminent)
            } else if model.method == .deviceKey {
                Button("Confirm with Face ID, Touch ID or passcode", systemImage: "faceid") {
                    Task { await model.useDeviceKey() }
                }
                .buttonStyle(.borderedProminent)
            } else {
                TimelineView(.periodic(from: .now, by: 1)) { _ in
                    // A locked method, or a throttle's wait: the input waits for the server's time.
                    let locked = model.lockCountdown() ?? model.waitCountdown()
                    VStack(spacing: 12) {
                        CodeInputView(
                            entry: model.code, feedback: model.feedback, isDisabled: locked != nil || working,
                            onType: { [model] text in Task { await model.type(text) } },
                            onPaste: { [model] text in Task { await model.paste(text) } })
                        if let left = model.totpCountdown() {
                            Label("New code in \(left)s", systemImage: "timer")
                                .font(.footnote.monospacedDigit())
                                .foregroundStyle(left <= 5 ? .orange : .secondary)
                                .accessibilityLabel("Your authenticator shows a new code in \(left) seconds")
                        }
                        if let locked {
                            Label(
                                "Locked. Try again in \(Duration.seconds(locked).formatted(.time(pattern: .minuteSecond))).",
                                systemImage: "lock.fill"
                            )
                            .foregroundStyle(.red)
                        }
                    }
                }
            }
        }

        private static func triesLeft(_ count: Int) -> String { "\(count) \(count == 1 ? "try" : "tries") left" }

        private var resend: some View {
            TimelineView(.periodic(from: .now, by: 1)) { _ in
                let left = max(model.resendCountdown() ?? 0, model.waitCountdown() ?? 0)
                Button(left > 0 ? "Resend code in \(left)s" : "Resend code") { Task { await model.resend() } }
                    .disabled(left > 0 || working)
                    .accessibilityHint(left > 0 ? "Available in \(left) seconds" : "")
            }
        }
    }
#endif

#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldClient
    import TwofoldScreens
    import UIKit

    /// Seed 004's enrolment on an `EnrollmentModel`. Flow A: "Use Face ID" (or Touch ID) or "Use
    /// Passcode Only"; flow B: "Using passcode authentication"; flow C: the alert "Please set up
    /// device passcode in Settings" with the SMS-only offer; and "Use Passcode Instead?" after
    /// a declined prompt.
    public struct EnrollmentView: View {
        private let model: EnrollmentModel
        @State private var alertDismissed = false
        @Environment(\.openURL) private var openURL

        /// The enrolment screen for `model`.
        public init(model: EnrollmentModel) { self.model = model }

        public var body: some View {
            Form {
                Section { phase }
                if let message = model.message {
                    Section {
                        Text(message)
                        if let failure = model.failure, failure.laError != nil {
                            Text(failure.logText).font(.caption.monospaced()).foregroundStyle(.secondary)
                        }
                    }
                }
                if let phone = model.capabilities {
                    Section("This iPhone") {
                        StatusRow("Passcode set", phone.passcodeSet)
                        StatusRow("\(phone.biometry.name) enrolled", phone.biometryEnrolled)
                        StatusRow("Secure Enclave", phone.secureHardware)
                    }
                }
            }
            .navigationTitle("Enroll This iPhone")
            .task { await model.check() }
            .refreshable { await model.check() }
            .onChange(of: model.phase) { alertDismissed = false }
            .alert(EnrollmentModel.noSecurityAlert, isPresented: shown(in: .noSecurity)) {
                Button("Open Settings") { openSettings() }
                Button("Use SMS Only") { Task { await model.useSMSOnly() } }
                Button("Not Now", role: .cancel) {}
            } message: {
                Text(
                    "Without a passcode this iPhone can't keep a sign-in key. Text message codes can sign you in instead."
                )
            }
            .alert("Use Passcode Instead?", isPresented: shown(in: .offerPasscode)) {
                Button("Use Passcode") { Task { await model.usePasscode() } }
                Button("Not Now", role: .cancel) {}
            } message: {
                Text(model.failure?.message ?? "")
            }
        }

        @ViewBuilder private var phase: some View {
            switch model.phase {
            case .checking:
                ProgressView("Checking this iPhone's security…")
            case .choose(let biometry):
                Text("Protect this iPhone's sign-in key with \(biometry.name), or with your passcode only.")
                Button("Use \(biometry.name)", systemImage: biometry == .touchID ? "touchid" : "faceid") {
                    Task { await model.useBiometrics() }
                }
                Button("Use Passcode Only", systemImage: "lock") { Task { await model.usePasscode() } }
            case .passcodeOnly:
                Button("Enroll with Passcode", systemImage: "lock") { Task { await model.usePasscode() } }
            case .noSecurity:
                Button("Open Settings", systemImage: "gear") { openSettings() }
                Button("Use SMS Only", systemImage: "message") { Task { await model.useSMSOnly() } }
            case .working:
                ProgressView("Waiting for the prompt…")
            case .offerPasscode:
                Button("Use Passcode Instead", systemImage: "lock") { Task { await model.usePasscode() } }
                Button("Start Again") { Task { await model.check() } }
            case .enrolled(let protection):
                Label(
                    protection == .biometric
                        ? "Enrolled: biometrics guard this iPhone's key"
                        : "Enrolled: your passcode guards this iPhone's key",
                    systemImage: "checkmark.seal.fill"
                )
                .foregroundStyle(.green)
            case .enrolledForSMS:
                Label("Enrolled for text message codes", systemImage: "checkmark.seal.fill").foregroundStyle(.green)
            }
        }

        /// An alert shown while the model is in `phase`, until the person dismisses it.
        private func shown(in phase: EnrollmentModel.Phase) -> Binding<Bool> {
            Binding(
                get: { [model, alertDismissed] in model.phase == phase && !alertDismissed },
                set: { [dismissed = $alertDismissed] shown in if !shown { dismissed.wrappedValue = true } })
        }

        private func openSettings() {
            if let url = URL(string: UIApplication.openSettingsURLString) { openURL(url) }
        }
    }

    #Preview("Enroll this iPhone") {
        NavigationStack { EnrollmentView(model: ScreenFixtures.enrollment()) }
    }
#endif

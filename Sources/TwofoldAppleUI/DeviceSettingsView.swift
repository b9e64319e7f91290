#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldScreens
    import UIKit

    /// Seed 004's settings on a `DeviceSettingsModel`: how this phone signs in, whether the
    /// server has it, the number for SMS codes, switching the method, SMS only, unenrolling, and
    /// the app's version and the device.
    public struct DeviceSettingsView: View {
        private let model: DeviceSettingsModel
        @State private var confirmingUnenroll = false
        /// The change the alert shows was answered ("Not now"): not asked again until the next check.
        @State private var dismissedChange: DeviceSettingsModel.SecurityChange?
        @Environment(\.scenePhase) private var scenePhase

        /// The settings of `model`.
        public init(model: DeviceSettingsModel) { self.model = model }

        private var changeShown: Binding<Bool> {
            Binding(
                get: { [model, dismissedChange] in model.change != nil && model.change != dismissedChange },
                set: { _ in })
        }

        public var body: some View {
            Form {
                Section("This iPhone") {
                    LabeledContent("Sign-in method", value: model.methodText)
                    LabeledContent("Registered with server", value: model.device == nil ? "No" : "Yes")
                    if let device = model.device {
                        LabeledContent(
                            "Enrolled", value: device.enrolledAt.formatted(date: .abbreviated, time: .shortened))
                        if let used = device.lastUsed {
                            LabeledContent("Last used", value: used.formatted(date: .abbreviated, time: .shortened))
                        }
                    }
                    LabeledContent("Phone for text codes", value: model.phone ?? "None")
                }
                if model.device != nil {
                    Section("Change method") {
                        Button("Switch to Passcode Only", systemImage: "lock") {
                            Task { await model.switchTo(.passcode) }
                        }
                        if model.canUseBiometry {
                            Button(model.switchToBiometryTitle, systemImage: "faceid") {
                                Task { await model.switchTo(.biometric) }
                            }
                        }
                        Button("Use Text Message Codes Only", systemImage: "message") {
                            Task { await model.useSMSOnly() }
                        }
                    }
                    Section {
                        Button("Unenroll This iPhone", role: .destructive) { confirmingUnenroll = true }
                    }
                }
                if let message = model.message {
                    Section { Text(message) }
                }
                Section("About") {
                    LabeledContent("App version", value: Self.version)
                    LabeledContent(
                        "Device",
                        value:
                            "\(UIDevice.current.model), \(UIDevice.current.systemName) \(UIDevice.current.systemVersion)"
                    )
                }
            }
            .navigationTitle("Device Settings")
            .disabled(model.working)
            .overlay { if model.working { ProgressView() } }
            // Seed 004 scenarios 8–10: what changed in the phone's security, noticed when the
            // screen shows and whenever the app comes back to the foreground.
            .task { await model.check() }
            .refreshable { await model.check() }
            .onChange(of: scenePhase) { _, phase in
                if phase == .active {
                    dismissedChange = nil
                    Task { await model.check() }
                }
            }
            .alert(
                model.change == .securityRemoved ? "Your Phone Is No Longer Secured" : "Your Phone's Security Changed",
                isPresented: changeShown
            ) {
                switch model.change {
                case .securityRemoved?:
                    Button("Use Text Message Codes") { Task { await model.useSMSOnly() } }
                case .keyLost?:
                    Button("Set Up Again") {
                        Task { await model.switchTo(model.canUseBiometry ? .biometric : .passcode) }
                    }
                case .canUpgrade(let biometry)?:
                    Button(biometry == .none ? "Use Passcode" : "Upgrade") {
                        Task { await model.switchTo(biometry == .none ? .passcode : .biometric) }
                    }
                case nil:
                    EmptyView()
                }
                Button("Not Now", role: .cancel) { dismissedChange = model.change }
            } message: {
                Text(model.changeText ?? "")
            }
            .confirmationDialog("Unenroll this iPhone?", isPresented: $confirmingUnenroll, titleVisibility: .visible) {
                Button("Unenroll", role: .destructive) { Task { await model.unenroll() } }
            } message: {
                Text("Its key is deleted, and it no longer signs you in.")
            }
        }

        private static var version: String {
            let info = Bundle.main.infoDictionary
            let short = info?["CFBundleShortVersionString"] as? String ?? "?"
            let build = info?["CFBundleVersion"] as? String ?? "?"
            return "\(short) (\(build))"
        }
    }

    #Preview("Device settings") {
        NavigationStack { DeviceSettingsView(model: ScreenFixtures.deviceSettings()) }
    }
#endif

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
        @Environment(\.scenePhase) private var scenePhase

        /// The settings of `model`.
        public init(model: DeviceSettingsModel) { self.model = model }

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
            // What changed in the phone's security, read again here; the alert that offers the
            // way on is the signed-in tabs' (`HomeView`, at launch and on every return).
            .task { await model.check() }
            .refreshable { await model.check() }
            .onChange(of: scenePhase) { _, phase in
                if phase == .active { Task { await model.check() } }
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

    /// What changed in the phone's security (`DeviceSettingsModel.check()`), as an alert with
    /// the way on: text message codes, the key set up again, or the upgrade. "Not Now" keeps it
    /// quiet until the change differs.
    struct SecurityChangeAlert: ViewModifier {
        let model: DeviceSettingsModel
        @State private var dismissed: DeviceSettingsModel.SecurityChange?

        func body(content: Content) -> some View {
            content
                .alert(
                    model.change == .securityRemoved
                        ? "Your Phone Is No Longer Secured" : "Your Phone's Security Changed",
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
                    Button("Not Now", role: .cancel) { dismissed = model.change }
                } message: {
                    Text(model.changeText ?? "")
                }
        }

        private var changeShown: Binding<Bool> {
            Binding(get: { [model, dismissed] in model.change != nil && model.change != dismissed }, set: { _ in })
        }
    }
#endif

#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldClient
    import TwofoldScreens
    import TwofoldTestingScreens

    /// Seed 004's testing dashboard on a `TestingDashboardModel`: the device's status (✅/❌),
    /// the eight test actions, the virtual phone's switches when there is one, the ten
    /// scenarios, the code field while a code is awaited, and the timestamped results log with
    /// LocalAuthentication's error codes, each entry expandable.
    public struct TestingDashboardView: View {
        private let model: TestingDashboardModel
        private let keyStorage: String?
        @State private var code = ""

        /// The dashboard of `model`; `keyStorage` says where this phone's keys are kept.
        public init(model: TestingDashboardModel, keyStorage: String? = nil) {
            (self.model, self.keyStorage) = (model, keyStorage)
        }

        public var body: some View {
            List {
                status
                if let running = model.running {
                    Section {
                        HStack {
                            ProgressView()
                            Text("Running: \(running)")
                        }
                        Button("Stop", role: .destructive) { model.stop() }
                    }
                }
                if let destination = model.awaitingCode { codeField(destination) }
                actions
                if let switches = model.switches { phoneSwitches(switches) }
                scenarios
                log
            }
            .navigationTitle("Testing Dashboard")
            .task { await model.refresh() }
            .refreshable { await model.refresh() }
        }

        // MARK: Device status

        @ViewBuilder private var status: some View {
            Section("Device status") {
                if let status = model.status {
                    capabilityRows(status.capabilities)
                    StatusRow("Enrolled with the server", status.method != nil)
                    StatusRow("Key on this iPhone", status.hasKey)
                    LabeledContent("Current method", value: status.method ?? "None")
                    LabeledContent("Seed 004 flow", value: status.capability.rawValue)
                    LabeledContent("Test account", value: status.username ?? "Not made yet")
                    StatusRow("Phone verified for SMS", status.phoneVerified)
                } else {
                    ProgressView()
                }
                if let keyStorage { LabeledContent("Keys kept in", value: keyStorage) }
            }
            if let phone = model.scenarioPhone {
                Section("Scenario \(phone.number)'s phone") { capabilityRows(phone.capabilities) }
            }
        }

        @ViewBuilder private func capabilityRows(_ phone: DeviceCapabilities) -> some View {
            StatusRow("Secure Enclave available", phone.secureHardware)
            StatusRow("Biometrics enrolled (\(phone.biometry.name))", phone.biometryEnrolled)
            StatusRow("Passcode set", phone.passcodeSet)
        }

        // MARK: Actions

        private var actions: some View {
            Section("Test actions") {
                ForEach(TestingDashboardModel.Action.allCases, id: \.self) { action in
                    Button(action.title) { Task { await model.perform(action) } }
                }
            }
            .disabled(model.running != nil)
        }

        private func codeField(_ destination: String) -> some View {
            Section("Code sent to \(destination)") {
                TextField("Code", text: $code)
                    .keyboardType(.numberPad)
                    .textContentType(.oneTimeCode)
                Button("Submit Code") {
                    let typed = code
                    code = ""
                    Task { await model.submitCode(typed) }
                }
                .disabled(code.isEmpty)
            }
        }

        private func phoneSwitches(_ switches: TestingDashboardModel.Switches) -> some View {
            Section("Virtual phone") {
                Toggle("Secure Enclave", isOn: flip(switches.capabilities.secureHardware) { .secureHardware($0) })
                Picker(
                    "Biometry",
                    selection: Binding(
                        get: { switches.capabilities.biometry },
                        set: { [model] kind in Task { await model.flip(.biometry(kind)) } })
                ) {
                    ForEach([Biometry.faceID, Biometry.touchID, Biometry.none], id: \.self) { kind in
                        Text(kind == Biometry.none ? "None" : kind.name).tag(kind)
                    }
                }
                Toggle(
                    "Biometrics enrolled", isOn: flip(switches.capabilities.biometryEnrolled) { .biometryEnrolled($0) })
                Toggle("Passcode set", isOn: flip(switches.capabilities.passcodeSet) { .passcode($0) })
                Toggle("Biometrics locked out", isOn: flip(switches.lockedOut) { .lockout($0) })
                Button(switches.cancelsNextPrompt ? "The next prompt will be declined" : "Decline the Next Prompt") {
                    Task { await model.flip(.cancelNextPrompt) }
                }
                .disabled(switches.cancelsNextPrompt)
            }
            .disabled(model.running != nil)
        }

        private func flip(
            _ value: Bool, _ change: @escaping @Sendable (Bool) -> TestingDashboardModel.Switch
        ) -> Binding<Bool> {
            Binding(get: { value }, set: { [model] on in Task { await model.flip(change(on)) } })
        }

        // MARK: Scenarios

        private var scenarios: some View {
            Section {
                ForEach(model.scenarios, id: \.number) { row in
                    HStack {
                        VStack(alignment: .leading, spacing: 2) {
                            Text("\(row.number). \(row.name)")
                            if let result = row.result {
                                Text(result.capitalized)
                                    .font(.caption.weight(.semibold))
                                    .foregroundStyle(Self.color(result))
                            }
                        }
                        Spacer()
                        Button("Run") { Task { await model.runScenario(row.number) } }
                            .buttonStyle(.bordered)
                            .accessibilityLabel("Run scenario \(row.number)")
                    }
                }
                Button("Run All Ten") { Task { await model.runAllScenarios() } }
            } header: {
                Text("Scenarios")
            }
            .disabled(model.running != nil)
        }

        private static func color(_ result: String) -> Color {
            switch result {
            case "passed": .green
            case "failed": .red
            default: .secondary
            }
        }

        // MARK: Results log

        private var log: some View {
            Section("Results log") {
                if model.log.isEmpty {
                    Text("Nothing has run yet.").foregroundStyle(.secondary)
                }
                ForEach(model.log) { entry in LogRow(entry: entry) }
            }
        }
    }

    /// One line of the results log: when, what, and what came of it; expanded, the source, the
    /// whole outcome and LocalAuthentication's error.
    private struct LogRow: View {
        let entry: TestingDashboardModel.LogEntry

        var body: some View {
            DisclosureGroup {
                VStack(alignment: .leading, spacing: 4) {
                    LabeledContent("Source", value: entry.source)
                    LabeledContent("At", value: entry.at.formatted(.iso8601))
                    Text(entry.outcome)
                    if let reason = entry.reason {
                        Text(reason).font(.callout.monospaced())
                    }
                }
                .font(.callout)
                .textSelection(.enabled)
            } label: {
                HStack(alignment: .firstTextBaseline) {
                    Text(entry.failed ? "❌" : "✅").accessibilityHidden(true)
                    VStack(alignment: .leading, spacing: 2) {
                        Text(entry.action)
                        Text(entry.at.formatted(date: .omitted, time: .standard))
                            .font(.caption.monospacedDigit())
                            .foregroundStyle(.secondary)
                        if let reason = entry.reason {
                            Text(reason).font(.caption).foregroundStyle(.red)
                        }
                    }
                }
                .accessibilityElement(children: .combine)
                .accessibilityValue(entry.failed ? "Failed" : "Done")
            }
        }
    }
#endif

#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldAPI
    import TwofoldScreens

    /// Seed 002's remembered devices on a `RememberedDevicesModel`: each with where it was
    /// remembered and when it was last used, and "Forget" (a swipe or the button).
    public struct RememberedDevicesView: View {
        @Bindable private var model: RememberedDevicesModel

        /// The list for `model`.
        public init(model: RememberedDevicesModel) { self.model = model }

        public var body: some View {
            List {
                if model.loaded, model.devices.isEmpty {
                    Text("No device skips the second step. Tick “Remember this device” when you sign in to add one.")
                        .foregroundStyle(.secondary)
                }
                ForEach(model.devices, id: \.id) { device in
                    VStack(alignment: .leading, spacing: 4) {
                        Text(device.name).font(.headline)
                        Text(RememberedDevicesModel.detail(device)).font(.footnote).foregroundStyle(.secondary)
                        Button("Forget", role: .destructive) { Task { await model.forget(device) } }
                            .font(.footnote)
                    }
                    .swipeActions { Button("Forget", role: .destructive) { Task { await model.forget(device) } } }
                }
                if let problem = model.problem {
                    Section { ProblemText(problem.message) }
                }
            }
            .navigationTitle("Remembered Devices")
            .disabled(model.working)
            .task { await model.load() }
            .refreshable { await model.load() }
        }
    }
#endif

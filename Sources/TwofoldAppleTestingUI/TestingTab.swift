#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldAppleUI
    import TwofoldTestingScreens

    extension ScreenFactory {
        /// Adds seed 004's testing dashboard as the last tab. Only the app's testing build calls
        /// it (App/project.yml, `TwofoldTesting`): the release build does not link this module,
        /// the virtual phone or the scenario runner.
        public func addTestingTab() {
            moreTabs.append(
                MoreTab(title: "Testing", systemImage: "checklist") { [self] in
                    AnyView(
                        ModelHost({ [self] in
                            TestingDashboardModel(client: session.client, device: device, deviceID: phoneID())
                        }) { TestingDashboardView(model: $0, keyStorage: keyStorage) })
                })
        }
    }
#endif

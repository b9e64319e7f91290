#if canImport(SwiftUI) && os(iOS)
    import SwiftUI

    /// Seed 004's ✅/❌ line of a device's status.
    struct StatusRow: View {
        let title: String
        let isOn: Bool

        init(_ title: String, _ isOn: Bool) { (self.title, self.isOn) = (title, isOn) }

        var body: some View {
            HStack(alignment: .firstTextBaseline) {
                Text(isOn ? "✅" : "❌").accessibilityHidden(true)
                Text(title)
            }
            .accessibilityElement(children: .combine)
            .accessibilityValue(isOn ? "Yes" : "No")
        }
    }
#endif

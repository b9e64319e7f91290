#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldAPI
    import TwofoldScreens

    /// Seed 003's protected screen: who is signed in, the app lock, and signing out.
    struct AccountView: View {
        let screens: ScreenFactory
        let user: UserDTO

        private var app: AppModel { screens.app }

        var body: some View {
            List {
                Section("Signed in") {
                    LabeledContent("Username", value: user.username)
                    LabeledContent("Email", value: user.email)
                    if let phone = user.phoneNumber { LabeledContent("Phone", value: phone) }
                    LabeledContent("Member since", value: user.createdAt.formatted(date: .abbreviated, time: .omitted))
                }
                if app.canLock {
                    Section {
                        Toggle(
                            "Lock Twofold",
                            isOn: Binding(
                                get: { [app] in app.lockEnabled }, set: { [screens] in screens.setLock($0) }))
                    } footer: {
                        Text(
                            "Face ID, Touch ID or your passcode then opens the app. It only hides this app on this iPhone."
                        )
                    }
                }
                Section {
                    Button("Sign Out", role: .destructive) { Task { await app.signOut() } }
                }
            }
            .navigationTitle("Account")
        }
    }
#endif

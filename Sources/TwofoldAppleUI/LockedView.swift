#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldScreens

    /// Seed 002's app lock: the session is kept, and Face ID, Touch ID or the passcode only
    /// shows it again on this phone. A cancel leaves the app locked, never signed out.
    struct LockedView: View {
        let app: AppModel

        var body: some View {
            ContentUnavailableView {
                Label("Twofold is locked", systemImage: "lock.fill")
            } description: {
                Text(
                    "Face ID, Touch ID or your passcode only unlock this app on this iPhone. Signing in "
                        + "somewhere else still takes your password and second step.")
                if let problem = app.lockProblem { ProblemText(problem) }
            } actions: {
                Button("Unlock", systemImage: "faceid") { Task { await app.unlock() } }
                    .buttonStyle(.borderedProminent)
                Button("Sign Out", role: .destructive) { Task { await app.signOut() } }
            }
            .task { await app.unlock() }
        }
    }
#endif

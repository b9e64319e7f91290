#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldAPI
    import TwofoldScreens

    /// Seed 000's passkeys on a `PasskeysModel`: each with its provider, "Synced" or "This device
    /// only" and when it was last used; adding one through the system's passkey sheet, renaming
    /// and removing (after the step-up the server asks for).
    public struct PasskeysView: View {
        private let model: PasskeysModel
        private let screens: ScreenFactory
        @State private var naming = false
        @State private var renaming: PasskeyDTO?
        @State private var removing: PasskeyDTO?
        @State private var name = ""
        @State private var codesSeen: [String]?

        /// The passkeys of `model`; `screens` makes the backup codes' model for a first passkey.
        public init(model: PasskeysModel, screens: ScreenFactory) { (self.model, self.screens) = (model, screens) }

        public var body: some View {
            List {
                Section {
                    if model.passkeys.isEmpty && !model.working {
                        Text("No passkeys yet. A passkey signs you in with Face ID or Touch ID instead of a code.")
                    }
                    ForEach(model.passkeys, id: \.id) { passkey in
                        PasskeyRow(passkey: passkey)
                            .swipeActions {
                                Button("Delete", role: .destructive) { removing = passkey }
                                Button("Rename") { rename(passkey) }.tint(.blue)
                            }
                            .contextMenu {
                                Button("Rename", systemImage: "pencil") { rename(passkey) }
                                Button("Delete", systemImage: "trash", role: .destructive) { removing = passkey }
                            }
                    }
                } footer: {
                    Text("Synced passkeys are in your iCloud Keychain on all your devices.")
                }
                Section {
                    Button("Add a Passkey", systemImage: "plus") {
                        name = ""
                        naming = true
                    }
                    .disabled(model.working)
                }
                if let problem = model.problem {
                    Section { ProblemText(problem.message) }
                }
            }
            .navigationTitle("Passkeys")
            .overlay { if model.working { ProgressView() } }
            .refreshable { await model.load() }
            .task { await model.load() }
            .alert("Name this passkey", isPresented: $naming) {
                TextField("My iPhone", text: $name)
                Button("Add") { Task { await model.add(name: name) } }
                Button("Cancel", role: .cancel) {}
            } message: {
                Text("The name helps you tell your passkeys apart.")
            }
            .alert("Rename passkey", isPresented: isSet($renaming)) {
                TextField("Name", text: $name)
                Button("Rename") {
                    if let id = renaming?.id { Task { await model.rename(id, to: name) } }
                }
                Button("Cancel", role: .cancel) {}
            }
            .confirmationDialog(
                "Delete \(removing?.name ?? "this passkey")?", isPresented: isSet($removing), titleVisibility: .visible
            ) {
                Button("Delete", role: .destructive) {
                    if let id = removing?.id { Task { await model.remove(id) } }
                }
            } message: {
                Text("You won't be able to sign in with it any more.")
            }
            .sheet(isPresented: codesShown) {
                if let codes = model.backupCodes {
                    NavigationStack {
                        ModelHost({ screens.backupCodes(codes) }) { BackupCodesView(model: $0) { codesSeen = codes } }
                    }
                }
            }
        }

        private func rename(_ passkey: PasskeyDTO) {
            name = passkey.name
            renaming = passkey
        }

        /// The backup codes a first passkey brought, until the person has saved them.
        private var codesShown: Binding<Bool> {
            Binding(
                get: { [model, codesSeen] in model.backupCodes != nil && model.backupCodes != codesSeen },
                set: { [model, seen = $codesSeen] shown in if !shown { seen.wrappedValue = model.backupCodes } })
        }

        private func isSet(_ value: Binding<PasskeyDTO?>) -> Binding<Bool> {
            Binding(get: { value.wrappedValue != nil }, set: { if !$0 { value.wrappedValue = nil } })
        }
    }

    /// One passkey: its name, provider, where it lives and when it was last used.
    private struct PasskeyRow: View {
        let passkey: PasskeyDTO

        var body: some View {
            VStack(alignment: .leading, spacing: 4) {
                Label(passkey.name, systemImage: passkey.synced ? "key.icloud" : "key")
                    .font(.headline)
                Text([passkey.provider, PasskeysModel.kind(passkey)].compactMap { $0 }.joined(separator: " · "))
                    .font(.subheadline)
                    .foregroundStyle(.secondary)
                if let used = passkey.lastUsedAt {
                    Text("Last used \(used, format: .relative(presentation: .named))")
                        .font(.caption)
                        .foregroundStyle(.secondary)
                } else {
                    Text("Never used").font(.caption).foregroundStyle(.secondary)
                }
            }
            .accessibilityElement(children: .combine)
        }
    }

    #Preview("Passkeys") {
        NavigationStack { PasskeysView(model: PasskeysModel(security: ScreenFixtures.security()), screens: .preview()) }
    }
#endif

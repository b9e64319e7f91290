#if canImport(SwiftUI) && os(iOS)
    import SwiftUI
    import TwofoldScreens

    /// Seed 000's code input: one cell per character of a `CodeEntry` (six digits, or a backup
    /// code's eight letters and digits shown as `XXXX-XXXX`), typed into one hidden field so
    /// the keyboard's one-time-code suggestion and paste work, a Paste button for a code in a
    /// message, and a haptic (and a shake) for each `Feedback` the model sends.
    public struct CodeInputView: View {
        private let entry: CodeEntry
        private let feedback: Feedback?
        private let isDisabled: Bool
        private let onType: @MainActor (String) -> Void
        private let onPaste: @MainActor (String) -> Void
        @FocusState private var focused: Bool
        @State private var shakes = 0
        @ScaledMetric(relativeTo: .title2) private var cellWidth: CGFloat = 40
        @Environment(\.accessibilityReduceMotion) private var reduceMotion

        /// An input showing `entry`; what is typed goes to `onType`, what is pasted to `onPaste`
        /// (the model keeps the code it finds); `feedback` is the model's last haptic.
        public init(
            entry: CodeEntry, feedback: Feedback? = nil, isDisabled: Bool = false,
            onType: @escaping @MainActor (String) -> Void, onPaste: @escaping @MainActor (String) -> Void
        ) {
            (self.entry, self.feedback, self.isDisabled, self.onType, self.onPaste) =
                (entry, feedback, isDisabled, onType, onPaste)
        }

        public var body: some View {
            VStack(spacing: 12) {
                ZStack {
                    ViewThatFits(in: .horizontal) {
                        cells
                        Text(entry.text.isEmpty ? " " : entry.shownText)
                            .font(.title2.monospaced())
                            .frame(maxWidth: .infinity, minHeight: cellWidth * 1.2)
                            .overlay(RoundedRectangle(cornerRadius: 8).stroke(.secondary))
                    }
                    .accessibilityHidden(true)
                    field
                }
                .contentShape(Rectangle())
                .onTapGesture { focused = true }
                .modifier(Shake(shakes: CGFloat(shakes)))

                PasteButton(payloadType: String.self) { pasted in
                    if let text = pasted.first { onPaste(text) }
                }
                .labelStyle(.titleAndIcon)
                .disabled(isDisabled)
            }
            .disabled(isDisabled)
            .opacity(isDisabled ? 0.5 : 1)
            .sensoryFeedback(trigger: feedback) { _, new in
                switch new?.kind {
                case .success?: SensoryFeedback.success
                case .error?: SensoryFeedback.error
                case nil: nil
                }
            }
            .onChange(of: feedback) { _, new in
                guard new?.kind == .error, !reduceMotion else { return }
                withAnimation(.linear(duration: 0.4)) { shakes += 1 }
            }
            .onAppear { focused = !isDisabled }
            .onChange(of: isDisabled) { _, disabled in
                // Back from a request (a wrong code, say): ready for the next try.
                if !disabled { focused = true }
            }
        }

        private var field: some View {
            TextField("", text: Binding(get: { [entry] in entry.text }, set: { [onType] in onType($0) }))
                .keyboardType(entry.allowsLetters ? .asciiCapable : .numberPad)
                .textContentType(.oneTimeCode)
                .textInputAutocapitalization(.characters)
                .autocorrectionDisabled()
                .focused($focused)
                .foregroundStyle(.clear)
                .tint(.clear)
                .frame(maxWidth: .infinity, maxHeight: .infinity)
                .accessibilityLabel(entry.allowsLetters ? "Backup code" : "\(entry.length)-digit code")
                .accessibilityValue(entry.text.isEmpty ? "Empty" : entry.text.map(String.init).joined(separator: " "))
                .accessibilityHint("\(entry.text.count) of \(entry.length) characters entered")
        }

        private var cells: some View {
            HStack(spacing: 8) {
                ForEach(0..<entry.length, id: \.self) { index in
                    if entry.allowsLetters && index == entry.length / 2 {
                        Text("-").font(.title2.monospaced()).foregroundStyle(.secondary)
                    }
                    cell(index)
                }
            }
        }

        private func cell(_ index: Int) -> some View {
            let current = focused && index == min(entry.text.count, entry.length - 1)
            return Text(entry.shown(at: index).map { String($0).uppercased() } ?? " ")
                .font(.title2.monospaced().weight(.semibold))
                .frame(width: cellWidth, height: cellWidth * 1.2)
                .background(.fill.tertiary, in: RoundedRectangle(cornerRadius: 8))
                .overlay(
                    RoundedRectangle(cornerRadius: 8)
                        .stroke(current ? Color.accentColor : .secondary.opacity(0.4), lineWidth: current ? 2 : 1))
        }
    }

    /// Seed 000's "shake animation" on a wrong code.
    private struct Shake: GeometryEffect {
        var shakes: CGFloat
        var animatableData: CGFloat {
            get { shakes }
            set { shakes = newValue }
        }

        func effectValue(size: CGSize) -> ProjectionTransform {
            ProjectionTransform(CGAffineTransform(translationX: 8 * sin(shakes * .pi * 6), y: 0))
        }
    }
#endif

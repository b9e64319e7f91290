import TwofoldAPI

extension Problem {
    /// The account is locked (20 wrong codes in a day, or by an admin); only an admin or recovery
    /// unlocks it. One text wherever it is refused, so the answer reveals nothing about why.
    static let accountLocked = Problem(
        status: 403, code: .accountLocked, title: "Account locked",
        detail: "This account is locked. An administrator can unlock it, or start recovery.")
}

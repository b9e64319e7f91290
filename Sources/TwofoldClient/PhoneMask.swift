/// A phone number as a log may show it: the last two digits only.
public enum PhoneMask {
    /// `number` with all but its last two characters hidden; just `••` for four characters or fewer.
    public static func masked(_ number: String) -> String {
        number.count > 4 ? String(repeating: "•", count: number.count - 2) + number.suffix(2) : "••"
    }
}

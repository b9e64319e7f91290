/// Destinations shown to users and written to responses, never in full (seed 004 security
/// notes, API.md "logs"): `+•••••••0123`, `a•••@example.com`.
enum Masking {
    static func phone(_ number: String) -> String {
        guard number.count > 4 else { return "••••" }
        return "+" + String(repeating: "•", count: max(3, number.count - 5)) + number.suffix(4)
    }

    static func email(_ address: String) -> String {
        guard let at = address.firstIndex(of: "@"), at > address.startIndex else { return "•••" }
        return String(address[address.startIndex]) + "•••" + address[at...]
    }

    static func destination(_ destination: String, channel: DeliveryChannel) -> String {
        channel == .sms ? phone(destination) : email(destination)
    }
}

import Foundation
import TwofoldAPI

/// JSON written directly, for the few documents every sign-in writes (the access token's claims,
/// the second step's answer): JSONEncoder costs several times as much. What is written here is
/// what `Wire.encoder()` writes for the same value (members in sorted order, ISO-8601
/// dates in whole seconds, absent optionals left out), which tests check.
extension String {
    /// Appends `value` as a JSON string literal (RFC 8259 §7): quoted, with quotation marks,
    /// reverse solidi and control characters escaped.
    mutating func appendJSONString(_ value: String) {
        append("\"")
        // Tokens, ids and addresses need no escapes: one append, not one per character.
        if value.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            append(value)
        } else {
            append(Self.escapedJSON(value))
        }
        append("\"")
    }

    private static func escapedJSON(_ value: String) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count + 16)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), byte]
            case UInt8(ascii: "\n"): bytes += Array(#"\n"#.utf8)
            case UInt8(ascii: "\r"): bytes += Array(#"\r"#.utf8)
            case UInt8(ascii: "\t"): bytes += Array(#"\t"#.utf8)
            case ..<0x20: bytes += Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            // Multi-byte UTF-8 sequences are copied as they are (every byte is 0x80 or above).
            default: bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `date` as a JSON string in ISO 8601 (`2026-11-22T23:51:53Z`), cut to the second
    /// below, as `JSONEncoder`'s `.iso8601` strategy writes it.
    mutating func appendJSONDate(_ date: Date) {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        var days = seconds / 86_400
        var time = seconds % 86_400
        if time < 0 {
            time += 86_400
            days -= 1
        }
        // Days since 1970 to a civil date (H. Hinnant, "chrono-compatible low-level date algorithms").
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        append("\"")
        appendDigits(year, 4)
        append("-")
        appendDigits(month, 2)
        append("-")
        appendDigits(day, 2)
        append("T")
        appendDigits(time / 3600, 2)
        append(":")
        appendDigits(time / 60 % 60, 2)
        append(":")
        appendDigits(time % 60, 2)
        append("Z\"")
    }

    private mutating func appendDigits(_ value: Int, _ width: Int) {
        let digits = String(value)
        if digits.count < width { append(String(repeating: "0", count: width - digits.count)) }
        append(digits)
    }
}

extension TokenDTO {
    func appendJSON(to json: inout String) {
        json += #"{"expiresAt":"#
        json.appendJSONDate(expiresAt)
        json += #","token":"#
        json.appendJSONString(token)
        json += "}"
    }
}

extension UserDTO {
    func appendJSON(to json: inout String) {
        json += #"{"createdAt":"#
        json.appendJSONDate(createdAt)
        json += #","email":"#
        json.appendJSONString(email)
        json += #","id":"#
        json.appendJSONString(id.canonicalText)
        if let phoneNumber {
            json += #","phoneNumber":"#
            json.appendJSONString(phoneNumber)
        }
        json += #","role":"#
        json.appendJSONString(role)
        json += #","status":"#
        json.appendJSONString(status)
        json += #","username":"#
        json.appendJSONString(username)
        json += "}"
    }
}

extension SecondStepResponse {
    /// The answer of every completed second step.
    var json: String {
        var json = #"{"accessToken":"#
        json.reserveCapacity(1024)
        accessToken.appendJSON(to: &json)
        if let backupCodesLow { json += #","backupCodesLow":\#(backupCodesLow)"# }
        if let backupCodesRemaining { json += #","backupCodesRemaining":\#(backupCodesRemaining)"# }
        if let deviceToken {
            json += #","deviceToken":"#
            json.appendJSONString(deviceToken)
        }
        if let passkeyName {
            json += #","passkeyName":"#
            json.appendJSONString(passkeyName)
        }
        json += #","refreshToken":"#
        refreshToken.appendJSON(to: &json)
        json += #","serverTime":"#
        json.appendJSONDate(serverTime)
        if let trustedDeviceToken {
            json += #","trustedDeviceToken":"#
            json.appendJSONString(trustedDeviceToken)
        }
        json += #","user":"#
        user.appendJSON(to: &json)
        return json + "}"
    }
}

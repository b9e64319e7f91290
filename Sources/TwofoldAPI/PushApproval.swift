import Foundation

// "Approve on your phone" (issue Z): a sign-in waiting for the phone that holds the account's
// device key. The signing-in screen shows a two-digit number; the phone shows three and signs
// the one picked, with its decision, with the device key.

/// `POST /auth/mfa/push`: ask the phone to approve the login flow's sign-in.
public struct PushStartRequest: Codable, Sendable, Equatable {
    public var otpFlowId: String?
    public var tempToken: String?

    public init(otpFlowId: String? = nil, tempToken: String? = nil) {
        (self.otpFlowId, self.tempToken) = (otpFlowId, tempToken)
    }
}

/// The answer of `POST /auth/mfa/push`: what the signing-in screen shows while it waits.
public struct PushStartResponse: Codable, Sendable, Equatable {
    public var requestId: String
    /// The number to pick on the phone. Shown only here, never sent to the phone as the answer.
    public var number: Int
    /// What the phone will say is asking (the app or browser, as its request named itself).
    public var asking: String
    /// Roughly where the sign-in comes from, as the phone will show it.
    public var place: String
    public var expiresAt: Date

    public init(requestId: String, number: Int, asking: String, place: String, expiresAt: Date) {
        (self.requestId, self.number, self.asking, self.place, self.expiresAt) =
            (requestId, number, asking, place, expiresAt)
    }
}

/// Where an approval request stands.
public struct PushStatus: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Waiting for the phone.
    public static let pending = PushStatus(rawValue: "pending")
    /// Approved with the right number: `POST /auth/mfa/push/complete` signs in.
    public static let approved = PushStatus(rawValue: "approved")
    /// Denied on the phone.
    public static let denied = PushStatus(rawValue: "denied")
    /// The phone picked another number than the screen showed.
    public static let wrongNumber = PushStatus(rawValue: "wrongNumber")
    /// "This wasn't me": the sign-in is over.
    public static let reported = PushStatus(rawValue: "reported")
    /// Nobody answered in time.
    public static let expired = PushStatus(rawValue: "expired")
    /// A newer request of the account took its place.
    public static let replaced = PushStatus(rawValue: "replaced")
    /// Its sign-in is complete.
    public static let used = PushStatus(rawValue: "used")

    /// Whether the request will still change (`pending`) or can still sign in (`approved`).
    public var isOpen: Bool { self == .pending || self == .approved }
}

/// `POST /auth/mfa/push/status`: the request's state, waiting up to `wait` seconds (0 to 25,
/// default 25) for it to change from `pending`.
public struct PushStatusRequest: Codable, Sendable, Equatable {
    public var otpFlowId: String?
    public var tempToken: String?
    public var requestId: String
    public var wait: Int?

    public static let longestWait = 25

    public init(otpFlowId: String? = nil, tempToken: String? = nil, requestId: String, wait: Int? = nil) {
        (self.otpFlowId, self.tempToken, self.requestId, self.wait) = (otpFlowId, tempToken, requestId, wait)
    }
}

/// `POST /auth/step-up/push/status` (signed in): a step-up request's state, waiting up to
/// `wait` seconds (0 to 25, default 25) for it to change from `pending`.
public struct PushStepUpStatusRequest: Codable, Sendable, Equatable {
    public var requestId: String
    public var wait: Int?

    public init(requestId: String, wait: Int? = nil) { (self.requestId, self.wait) = (requestId, wait) }
}

/// The answer of `POST /auth/mfa/push/status`.
public struct PushStatusResponse: Codable, Sendable, Equatable {
    public var status: PushStatus
    /// What to tell the person, in words, when the request ended without approval.
    public var message: String?

    public init(status: PushStatus, message: String? = nil) {
        (self.status, self.message) = (status, message)
    }
}

/// `POST /auth/mfa/push/complete`: an approved request completes its login flow (the answer is
/// `SecondStepResponse`).
public struct PushCompleteRequest: Codable, Sendable, Equatable {
    public var otpFlowId: String?
    public var tempToken: String?
    public var requestId: String
    public var trustDevice: Bool?

    public init(otpFlowId: String? = nil, tempToken: String? = nil, requestId: String, trustDevice: Bool? = nil) {
        (self.otpFlowId, self.tempToken, self.requestId, self.trustDevice) =
            (otpFlowId, tempToken, requestId, trustDevice)
    }
}

/// An approval request as the phone shows it (`GET /device/{deviceID}/approvals`).
public struct PushApprovalDTO: Codable, Sendable, Equatable, Identifiable {
    public var requestId: String
    /// Three numbers in random order; one of them is on the signing-in screen.
    public var choices: [Int]
    public var asking: String
    public var place: String
    public var createdAt: Date
    public var expiresAt: Date
    /// `signIn`: approving lets a sign-in go on; `stepUp`: it confirms a signed-in session (on
    /// `asking`, from `place`) is the owner's, before a sensitive change there.
    public var purpose: String

    public var id: String { requestId }

    public init(
        requestId: String, choices: [Int], asking: String, place: String, createdAt: Date, expiresAt: Date,
        purpose: String = "signIn"
    ) {
        (self.requestId, self.choices, self.asking, self.place) = (requestId, choices, asking, place)
        (self.createdAt, self.expiresAt, self.purpose) = (createdAt, expiresAt, purpose)
    }
}

/// The answer of `GET /device/{deviceID}/approvals`: the open requests (at most one), after
/// waiting up to `?wait=` seconds (0 to 25) for one when there is none.
public struct PushApprovalsResponse: Codable, Sendable, Equatable {
    public var approvals: [PushApprovalDTO]
    /// What the account should know (seed 003's suspicious activity: a sign-in from a device
    /// or network it had not used), newest first: the last day's, at most ten.
    public var notices: [PhoneNoticeDTO]

    public init(approvals: [PushApprovalDTO], notices: [PhoneNoticeDTO] = []) {
        (self.approvals, self.notices) = (approvals, notices)
    }
}

/// A notice for the account's phone (`GET /device/{deviceID}/approvals`), also sent through
/// Apple's push service where the phone gave its address.
public struct PhoneNoticeDTO: Codable, Sendable, Equatable, Identifiable {
    public var id: String
    public var title: String
    /// In words, with what to do if it was not the owner.
    public var body: String
    public var createdAt: Date

    public init(id: String, title: String, body: String, createdAt: Date) {
        (self.id, self.title, self.body, self.createdAt) = (id, title, body, createdAt)
    }
}

/// The query of `GET /device/{deviceID}/approvals`: `wait`, seconds to wait for a request or a
/// new notice (0 to 25); `after`, the newest notice the phone has (its `id`): notices up to it
/// do not end the wait.
public struct PushWaitQuery: EndpointQuery, Equatable {
    public static let seconds = 0...PushStatusRequest.longestWait
    public var wait: Int?
    public var after: String?

    public init(wait: Int? = nil, after: String? = nil) { (self.wait, self.after) = (wait, after) }

    public var items: [URLQueryItem] {
        (wait.map { [URLQueryItem(name: "wait", value: String($0))] } ?? [])
            + (after.map { [URLQueryItem(name: "after", value: $0)] } ?? [])
    }

    public init(items: [URLQueryItem]) throws(QueryRefusal) {
        let query = try QueryItems(items, reading: ["wait", "after"])
        if let after = query.values["after"] {
            guard after.count <= 64, UUID(uuidString: after) != nil else {
                throw QueryRefusal(["after": "must be the id of a notice this server gave"])
            }
            self.after = after.lowercased()
        }
        guard let text = query.values["wait"] else { return }
        guard let value = Int(text), Self.seconds.contains(value) else {
            throw QueryRefusal(["wait": "must be a whole number of seconds from 0 to \(Self.seconds.upperBound)"])
        }
        wait = value
    }
}

/// `PUT /device/{deviceID}/push-token`: where Apple's push service reaches this phone (the
/// device token `UIApplication` gave the app, as hex). Requests and notices are then announced
/// there too; without it, the phone learns of them while it asks (`GET …/approvals?wait=`).
public struct PushTokenRequest: Codable, Sendable, Equatable {
    public var pushToken: String

    public init(pushToken: String) { self.pushToken = pushToken }
}

/// `POST /device/{deviceID}/approvals`: the phone's answer, signed with the device key (its
/// biometric key where it has one) over `PushApprovalMessage.signed(…)`.
public struct PushDecisionRequest: Codable, Sendable, Equatable {
    public var requestId: String
    /// `approve`, `deny` or `notMe`.
    public var decision: String
    /// The number picked (approve only).
    public var number: Int?
    /// base64 of the ECDSA-SHA256 signature (DER or raw 64 bytes).
    public var signature: String

    public init(requestId: String, decision: String, number: Int?, signature: String) {
        (self.requestId, self.decision, self.number, self.signature) = (requestId, decision, number, signature)
    }
}

/// The answer of `POST /device/{deviceID}/approvals`: what the decision did.
public struct PushDecisionResponse: Codable, Sendable, Equatable {
    /// `approved`, `denied`, `wrongNumber` or `reported`.
    public var status: PushStatus
    public var message: String

    public init(status: PushStatus, message: String) { (self.status, self.message) = (status, message) }
}

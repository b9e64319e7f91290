import Foundation
import Logging
import TwofoldAPI
import TwofoldCore

/// The channel from the server to the account's phones (issue Z item 2, seed 003's "realtime /
/// push"): the phone's long poll (`PushApprovals.pending`, which carries the notices too) and,
/// where the phone gave its address and the server has a key, Apple's push service. What goes
/// through it: a sign-in waiting for approval, and a notice of a sign-in from a device or network
/// the account had not used.
struct PhoneChannel: Sendable {
    let store: any PhoneChannelStore
    let deviceKeys: DeviceKeyService
    /// Setting where Apple reaches a phone is a setting (`SignInChange.configure`): a session
    /// that proved only a code cannot point the account's announcements elsewhere.
    let policy: SignInPolicy
    let waiters: PushWaiters
    /// `nil`: Apple's push service is not configured; phones learn of things while they ask.
    let delivery: (any PhoneNotificationDelivery)?
    /// Where notifications are sent from, off the request's path: queues of their own (a slow
    /// push service does not hold up the other background work), an account always on the same
    /// one (its announcements go out in order), several accounts at once.
    let work: [BackgroundWork]
    let clock: ServerClock
    let logger: Logger

    /// How long a notice is shown, and how many at most.
    static let noticeLifetime: TimeInterval = 24 * 3600
    static let noticesShown = 10
    /// How far back a sign-in's device and network are looked for among the account's sign-ins.
    static let remembered: TimeInterval = 90 * 24 * 3600
    /// How many of an account's phones are told of one thing (the most recently set tokens).
    static let phonesTold = 10
    /// How far back the watch looks for sign-ins it has not looked at (a restart, a slow write).
    static let lookBack: TimeInterval = 10 * 60

    // MARK: Where Apple reaches the phone

    /// Sets where Apple's push service reaches `deviceID` (a device of `user`'s with a key).
    func setToken(deviceID: String, _ body: PushTokenRequest, caller: AuthenticatedUser, user: User) async throws
        -> SuccessResponse
    {
        try await policy.require(.configure, caller: caller, user: user)
        let device = try await deviceKeys.keyDevice(deviceID, userID: user.id)
        let token = body.pushToken.lowercased()
        guard (64...200).contains(token.count), token.count.isMultiple(of: 2),
            token.allSatisfy({ $0.isHexDigit && $0.isASCII })
        else {
            throw InputValidation.failure(["pushToken": "must be the device token Apple gave the app, as hex"])
        }
        try await store.setToken(token, deviceRowID: device.id, userID: user.id, now: clock.now())
        return SuccessResponse()
    }

    /// Stops announcing to `deviceID` through Apple (the app signs out, or the person turned
    /// notifications off).
    func forgetToken(deviceID: String, user: User) async throws -> SuccessResponse {
        let device = try await deviceKeys.keyDevice(deviceID, userID: user.id)
        _ = try await store.forgetToken(deviceRowID: device.id)
        return SuccessResponse()
    }

    // MARK: Sending

    /// Sends `notification` to every phone of `userID`'s that gave its address, in the
    /// background; a token Apple no longer knows is forgotten. Failures are logged without the
    /// token.
    func announce(_ notification: PhoneNotification, to userID: UUID) async {
        guard let delivery, !work.isEmpty else { return }
        let queue = work[Int(userID.uuid.15) % work.count]
        await queue.start("phone notification", logger: logger) { [store, logger] in
            for token in try await store.tokens(userID: userID, limit: Self.phonesTold) {
                // A request that expired while it waited is worth nothing to the phone.
                if let expiresAt = notification.expiresAt, expiresAt <= Date() { return }
                do {
                    if try await delivery.deliver(notification, to: token) == .tokenGone {
                        try await store.forgetToken(token)
                        logger.info("a phone's push token was forgotten: \(delivery.name) no longer knows it")
                    }
                } catch {
                    logger.warning(
                        "a phone notification was not delivered",
                        metadata: ["kind": "\(notification.kind.rawValue)", "error": "\(error)"])
                }
            }
        }
    }

    // MARK: Notices

    /// `userID`'s notices of the last day, newest first.
    func notices(userID: UUID) async throws -> [PhoneNoticeDTO] {
        try await store.notices(
            userID: userID, since: clock.now().addingTimeInterval(-Self.noticeLifetime), limit: Self.noticesShown
        ).map {
            PhoneNoticeDTO(
                id: $0.id.uuidString.lowercased(), title: $0.title, body: $0.body, createdAt: $0.createdAt)
        }
    }

    /// Reads the sign-ins of the last ten minutes it has not looked at yet (each is marked once
    /// looked at, so a restart or a write that lands late loses none), and tells the account's
    /// phones of each one from a device and network none of its sign-ins of the last 90 days
    /// came from or was used from. An account's first sign-in tells nothing (there is no one
    /// else yet). Every instance with background jobs may run it: a sign-in is told once
    /// (`phone_notices.session_id`).
    func watchSignIns() async throws {
        let now = clock.now()
        let seen = try await store.uncheckedSignIns(
            after: now.addingTimeInterval(-Self.lookBack), until: now, limit: 500)
        for signIn in seen {
            try await check(signIn)
        }
        try await store.markChecked(seen.map(\.sessionID), now: now)
    }

    private func check(_ signIn: SignInSeen) async throws {
        let device = SessionNames.name(signIn.userAgent)
        let place = PlaceNames.of(signIn.ipAddress)
        // The sessions started or used in the 90 days before: a session kept alive by its
        // refreshes counts as long as it is used.
        let earlier = try await store.signIns(
            userID: signIn.userID, from: signIn.createdAt.addingTimeInterval(-Self.remembered),
            until: signIn.createdAt, except: signIn.sessionID)
        if earlier.contains(where: {
            SessionNames.name($0.userAgent) == device && PlaceNames.of($0.ipAddress) == place
        }) {
            return
        }
        guard try await store.signedInBefore(userID: signIn.userID, until: signIn.createdAt, except: signIn.sessionID)
        else { return }
        let when = FactorChanges.moment(signIn.createdAt)
        let notice = PhoneNoticeRecord(
            id: SecureRandom.timeOrderedUUID(at: clock.now()), userID: signIn.userID,
            title: "New sign-in to your account",
            body: """
                \(device) from \(place) signed in at \(when). If this wasn't you, change your password now \
                and sign out the other sessions on your account's security page.
                """, createdAt: clock.now())
        guard try await store.addNotice(notice, sessionID: signIn.sessionID) else { return }
        await waiters.signal(.account(signIn.userID))
        await announce(
            PhoneNotification(
                kind: .notice, id: notice.id.uuidString.lowercased(), title: notice.title, body: notice.body,
                expiresAt: notice.createdAt.addingTimeInterval(Self.noticeLifetime)), to: signIn.userID)
    }
}

import ArgumentParser
import Foundation
import TwofoldAPI
import TwofoldClient
import TwofoldCore

extension DeviceCommand {
    /// The request waiting for the virtual phone (issue Z), after up to `wait` seconds.
    static func waitingRequest(_ phone: Phone, wait: Int) async throws -> (PhoneApprovals, PushApprovalDTO) {
        let username = try await phone.username()
        let approvals = PhoneApprovals(session: phone.session, signer: phone.flows.signer(username: username))
        guard let request = try await inWords({ try await approvals.waiting(wait: wait) }).first else {
            throw CommandFailure(description: "No sign-in is waiting for this phone's approval.")
        }
        return (approvals, request)
    }

    /// `--wait`: how long to wait for a request to come.
    struct Waiting: ParsableArguments {
        @Option(help: "Seconds to wait for a request (0 to 25).") var wait = 0

        func validate() throws {
            guard PushWaitQuery.seconds.contains(wait) else { throw ValidationError("--wait is 0 to 25 seconds") }
        }
    }

    static func describe(_ request: PushApprovalDTO) -> String {
        (request.purpose == "stepUp"
            ? "A session on \(request.place) (\(request.asking)) asks you to confirm it's you. "
            : "A sign-in from \(request.place) (\(request.asking)) asks to be approved. ")
            + "Its screen shows one of: \(request.choices.map(String.init).joined(separator: ", "))."
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Approve a sign-in waiting for this phone: pick the number its screen shows.")
        @OptionGroup var options: ServerOptions
        @Option(help: "The number the signing-in screen shows.") var number: Int?
        @OptionGroup var waiting: Waiting

        func run() async throws {
            let phone = try await Phone(options)
            let (approvals, request) = try await DeviceCommand.waitingRequest(phone, wait: waiting.wait)
            guard let number else {
                throw CommandFailure(
                    description: DeviceCommand.describe(request)
                        + " Approve with: twofold device approve --number NUMBER")
            }
            guard request.choices.contains(number) else {
                throw CommandFailure(description: DeviceCommand.describe(request) + " \(number) is not one of them.")
            }
            let answer = try await inWords { try await approvals.answer(request, .approve, number: number) }
            try await phone.keep()
            print(answer.message)
            if answer.status != .approved { throw ExitCode(1) }
        }
    }

    struct Deny: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Deny a sign-in waiting for this phone; --not-me also ends it and warns the owner.")
        @OptionGroup var options: ServerOptions
        @Flag(help: "This wasn't me: end the sign-in and email the owner to change the password.") var notMe = false
        @OptionGroup var waiting: Waiting

        func run() async throws {
            let phone = try await Phone(options)
            let (approvals, request) = try await DeviceCommand.waitingRequest(phone, wait: waiting.wait)
            let answer = try await inWords { try await approvals.answer(request, notMe ? .notMe : .deny) }
            try await phone.keep()
            print(answer.message)
        }
    }
}

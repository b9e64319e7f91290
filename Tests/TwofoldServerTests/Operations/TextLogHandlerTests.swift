import Foundation
import Logging
import NIOConcurrencyHelpers
import Testing

@testable import TwofoldServer

/// The default log format: swift-log's `StreamLogHandler` lines, the logger's metadata put into
/// words when a line is written.
struct TextLogHandlerTests {
    static func logger(_ lines: NIOLockedValueBox<[String]>, level: Logger.Level = .info) -> Logger {
        var logger = Logger(label: "twofold.test") { label in
            TextLogHandler(label: label) { line in lines.withLockedValue { $0.append(line) } }
        }
        logger.logLevel = level
        return logger
    }

    @Test func writesTimeLevelLabelSortedMetadataSourceAndMessage() throws {
        let lines = NIOLockedValueBox<[String]>([])
        var logger = Self.logger(lines)
        logger[metadataKey: "request-id"] = "R1"
        logger[metadataKey: "b"] = "2"
        logger.info("signed in", metadata: ["a": "1", "b": "3"], source: "Twofold")
        let line = try #require(lines.withLockedValue { $0 }.first)
        let pattern =
            #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} info twofold.test: a=1 b=3 request-id=R1 \[Twofold\] signed in\n$/#
        #expect(line.wholeMatch(of: pattern) != nil, "\(line)")
    }

    struct Refused: Error, CustomStringConvertible {
        var description: String { "refused" }
    }

    @Test func writesNothingBelowItsLevelAndNamesAnError() throws {
        let lines = NIOLockedValueBox<[String]>([])
        var logger = Self.logger(lines, level: .warning)
        logger[metadataKey: "request-id"] = "R2"
        logger.info("not written")
        logger.warning("no route", error: Refused(), source: "Vapor")
        #expect(lines.withLockedValue { $0 }.count == 1)
        let line = try #require(lines.withLockedValue { $0 }.first)
        #expect(
            line.hasSuffix(
                " error.message=refused error.type=TwofoldServerTests.TextLogHandlerTests.Refused request-id=R2 [Vapor] no route\n"
            ), "\(line)")
    }
}

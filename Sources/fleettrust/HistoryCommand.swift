import ArgumentParser
import Foundation
import FleetTrustCore

/// `fleettrust history HOST`: the key timeline the history store remembers for one host.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print a host's key timeline from the history: which key of each type it presented, from when to when.",
        discussion: """
            HOST is the inventory name (or the address:port it was probed at). A key that comes \
            back after another of its type is marked REVERTED. Exit status: 0 printed; 64 bad \
            usage, an unknown host or an unusable history file.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json
    }

    @Argument(help: "The host's inventory name, or address:port.")
    var host: String

    @Option(help: "table for people, json for programs.")
    var format: Format = .table

    @Option(help: ArgumentHelp("Only probes since then: a duration back from now (90s, 45m, 12h, 30d, 2w), a date (2026-11-01, UTC) or an RFC 3339 time.",
                               valueName: "duration|date"))
    var since: String?

    @OptionGroup var history: HistoryFileOption

    func run() async throws {
        let lookup = HostTimelineLookup(host: host, since: since, path: history.path)
        do {
            let now = HistoryTime.nowMilliseconds()
            let timeline = try await OffPool.run { try lookup.timeline(now: now) }
            switch format {
            case .table: FileHandle.standardOutput.write(Data(timeline.table().utf8))
            case .json: FileHandle.standardOutput.write(try ReportJSON.encode(timeline) + Data("\n".utf8))
            }
        } catch let problem as HostTimelineLookup.Problem {
            printError(problem.description)
            throw ExitCode(64)
        }
    }
}

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

    @Option(name: .customLong("history"), help: ArgumentHelp(
        "The history database. Default: $XDG_STATE_HOME/fleettrust/history.sqlite, else ~/.local/state/fleettrust/history.sqlite.",
        valueName: "file"))
    var historyPath: String?

    func run() async throws {
        do {
            var from: UInt64 = 0
            if let since {
                guard let parsed = HistoryTime.since(since, now: HistoryTime.nowMilliseconds()) else {
                    throw CommandFailure.unreadableInput(
                        "--since \(CleanText(since, limit: 64)): not a duration (90s, 45m, 12h, 30d, 2w), a date (2026-11-01) or an RFC 3339 time")
                }
                from = parsed
            }
            let path = expandTilde(historyPath ?? HistoryStore.defaultPath(environment: ProcessInfo.processInfo.environment))
            let host = host, start = from
            let sightings: [StoredSighting]
            do {
                sightings = try await OffPool.run {
                    guard let store = try HistoryStore.open(path: path, readOnly: true) else { return [] }
                    return try store.sightings(of: host, since: start)
                }
            } catch {
                throw CommandFailure.unreadableInput("\(error)")
            }
            guard !sightings.isEmpty else {
                throw CommandFailure.unreadableInput("\(CleanText(host)): no recorded probe in \(path)"
                                                     + (since.map { " since \(CleanText($0, limit: 64))" } ?? ""))
            }
            let names = Array(Set(sightings.map(\.host.value))).sorted()
            guard names.count == 1 else {
                throw CommandFailure.unreadableInput("\(CleanText(host)) was probed under several inventory names ("
                                                     + names.prefix(5).joined(separator: ", ")
                                                     + "); give one of them")
            }
            let timeline = HostTimeline(host: sightings.last?.host.value ?? host, sightings: sightings)
            switch format {
            case .table:
                FileHandle.standardOutput.write(Data(timeline.table().utf8))
            case .json:
                FileHandle.standardOutput.write(try ReportJSON.encode(timeline) + Data("\n".utf8))
            }
        } catch let failure as CommandFailure {
            printError(failure.description)
            throw ExitCode(64)
        }
    }
}

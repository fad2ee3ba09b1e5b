import ArgumentParser
import Foundation
import FleetTrustCore

/// `fleettrust merge`: the reports of many scanners (one per network, as the Ansible playbook
/// fetches them) as one document, to replay and review centrally. The merge is `ReportMerge`.
struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Merge scan reports (scan --format json) from several scanners into one document.",
        discussion: """
            Each host entry keeps its scanned_from, the scanner that proved its keys; a host proved \
            by two scanners appears twice. Two scanners that proved different keys for the same host \
            (its name and port, or the name ssh looks it up under) are a split view: listed on \
            standard error and in the document's split_views. The document's summary is what \
            replaying it finds before today's files judge it again: each entry's recorded status, \
            split-view where the scanners disagree, and scan's exit status (2 for any host \
            \(JudgementWords.statuses(atLevel: 2)), or presenting again a key it had replaced). Judge \
            the result centrally with `fleettrust scan --replay`. Exit status: 0 merged (split views \
            included); 64 bad usage or a report that cannot be read.
            """)

    @Option(help: ArgumentHelp("Write the merged document to this file instead of standard output, atomically.", valueName: "file"))
    var output: String?

    @Argument(help: ArgumentHelp("The reports to merge.", valueName: "report"))
    var reports: [String]

    func validate() throws {
        if reports.isEmpty { throw ValidationError("give at least one report to merge") }
        // One report given twice would count each of its hosts twice.
        var seen: [String: String] = [:]
        for report in reports {
            let canonical = FileSystemCalls.canonicalPath(expandTilde(report))
            if let earlier = seen[canonical] {
                throw ValidationError("\(Sanitizer.clean(earlier)) and \(Sanitizer.clean(report)) are the same report; give each report once")
            }
            seen[canonical] = report
        }
    }

    func run() throws {
        do {
            let merge = ReportMerge(files: reports.map(expandTilde))
            let output = try CommandOutput(path: self.output.map(expandTilde))
            let survey: ReportMerge.Survey
            do {
                survey = try merge.survey()
                try merge.write(survey, to: output.write)
                try output.finish()
            } catch {
                output.abandon()
                throw error
            }
            for split in survey.splitViews {
                printError("split view: \(split.name) port \(split.port): \(split.scanners.joined(separator: ", ")) proved different keys")
            }
        } catch let failure as MergeError {
            printError(failure.description)
            throw ExitCode(64)
        } catch let failure as AtomicOutputFile.Failure {
            printError(failure.description)
            throw ExitCode(64)
        }
    }
}

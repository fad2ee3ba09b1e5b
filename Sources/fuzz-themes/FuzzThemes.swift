import FleetTrustCore
import FleetTrustDashboard
import Foundation
import FuzzDriver
import Glibc

/// libFuzzer target for the dashboard's theme parser and the scan-replay reader: a theme file or
/// a recorded scan from anywhere must never crash fleettrust, only be refused with a reason.
///
/// Built with `-DLIBFUZZER -sanitize=fuzzer` the program runs libFuzzer's driver; built
/// normally, it replays inputs (files named on the command line) to reproduce a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzThemesOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzThemes.run(FuzzDriver.bytes(data, size))
    return 0
}

enum FuzzThemes {
    static let knownHosts = KnownHosts(files: [KnownHostsFile(path: "fuzz", bytes: Array(
        "web1,192.0.2.10 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEf84BXqlw4P6E937hMKFbQKSNtq2sAfXj5Kb2cHqggY\n".utf8))])

    static func run(_ bytes: [UInt8]) {
        theme(bytes)
        replay(bytes)
    }

    /// The same decoding `Theme.load` applies to a file's bytes. A refusal is printed as is
    /// (by the argument parser), so it must quote the file only cleaned and bounded.
    static func theme(_ bytes: [UInt8]) {
        let theme: Theme
        do {
            theme = try Theme.parse(String(decoding: bytes, as: UTF8.self), name: "fuzz", file: "fuzz")
        } catch {
            let message = (error as! ThemeError).message
            precondition(!message.unicodeScalars.contains { $0.properties.generalCategory == .control },
                         "a theme error must not carry control characters from the file")
            precondition(message.utf8.count <= 1024, "a theme error must stay short")
            return
        }
        for role in StyleRole.allCases {
            _ = theme.style(role)
            _ = theme.withoutColor.style(role)
        }
    }

    /// The path of `scan --replay`: load, judge again, report.
    static func replay(_ bytes: [UInt8]) {
        guard let pairs = try? ScanReplay.load(Data(bytes), source: "fuzz") else { return }
        let hosts = pairs.map(\.host)
        let results = pairs.map(\.result)
        let judge = FleetJudge(knownHosts: knownHosts, pins: nil).preparing(for: hosts)
        let shared = SharedKeyTable(names: hosts.map { CleanText($0.name).value }, results: results)
        let judged = hosts.indices.map { judge.judge(hosts[$0], results[$0], keySharing: shared.sharing(results[$0])) }
        let report = ScanReport(knownHostsFiles: ["fuzz"], pinFiles: [], judged: judged)
        guard let encoded = try? report.encoded() else { preconditionFailure("a judged scan must encode") }
        // A replay of the replay judges the same: the document carries everything the judge used.
        guard let again = try? ScanReplay.load(encoded, source: "fuzz") else { preconditionFailure("a written scan must replay") }
        for (index, pair) in again.enumerated() {
            let second = judge.judge(pair.host, pair.result, keySharing: shared.sharing(results[index]))
            precondition(second.status == judged[index].status, "replaying a scan must give the same status")
        }
    }
}

@main
enum FuzzThemesMain {
    static func main() { FuzzDriver.main(callback: fuzzThemesOneInput, check: FuzzThemes.run) }
}

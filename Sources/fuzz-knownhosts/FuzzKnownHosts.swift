import FleetTrustCore
import FuzzDriver
import Glibc

/// libFuzzer target for the known_hosts and pin-file readers: arbitrary bytes must never
/// crash them, and a parsed file must keep every byte (the writer relies on that).
///
/// Built with `-DLIBFUZZER -sanitize=fuzzer` the program runs libFuzzer's driver; built
/// normally, it replays inputs (files named on the command line) to reproduce a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKnownHostsOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzKnownHosts.run(FuzzDriver.bytes(data, size))
    return 0
}

enum FuzzKnownHosts {
    static let probeKey = try! HostKey(openSSHLine: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEf84BXqlw4P6E937hMKFbQKSNtq2sAfXj5Kb2cHqggY")
    static let targets = [ConnectionTarget(host: "foo.example"), ConnectionTarget(host: "Foo.Example", port: 2222),
                          ConnectionTarget(host: "127.1", port: 2222, checkHostIPAddress: "192.0.2.1"),
                          ConnectionTarget(host: "h", hostKeyAlias: "alias", additionalLookupNames: ["10.0.0.1"])]

    static func run(_ bytes: [UInt8]) {
        let file = KnownHostsFile(path: "fuzz", bytes: bytes)
        var reassembled = file.lines.map(\.raw).joined(separator: [0x0a]).map { $0 }
        if bytes.last == 0x0a { reassembled.append(0x0a) }
        precondition(reassembled == bytes, "parsed lines must keep every byte")
        let lookups = targets.map(\.lookup.hostString) + targets.compactMap(\.lookup.retryString)
        let prepared = file.preparing(lookups: lookups)
        for lookup in lookups {
            precondition(prepared.matchingLines(lookup) == file.matchingLines(lookup), "bulk matching must equal one lookup at a time")
        }
        for options in [KnownHosts.Options(), KnownHosts.Options(cidrPatterns: true)] {
            let judge = KnownHostsJudge(knownHosts: KnownHosts(files: [file], options: options))
            var keys = [probeKey]
            keys += file.lines.prefix(8).compactMap { $0.entry?.key.hostKey }
            for target in targets {
                for key in keys { _ = judge.judge(key, for: target, now: 1_800_000_000) }
            }
            let host = InventoryHost(name: targets[1].host, port: targets[1].port, hostKeyAlias: targets[1].hostKeyAlias)
            let probe = ProbeResult(host: host.name, port: host.port, keys: keys.prefix(3).map { DiscoveredKey(key: $0) })
            let judged = FleetJudge(knownHosts: KnownHosts(files: [file], options: options), pins: nil).judge(host, probe, now: 1_800_000_000)
            precondition(judged.status != .trusted || judged.negotiatedKey?.verdict.isTrusted == true, "trusted means ssh's key is trusted")
        }
        if let pins = try? PinSet.parse(path: "fuzz", bytes: bytes) {
            for target in targets {
                _ = PinJudgement.judge(keys: [probeKey], names: [target.lookup.name, target.lookup.hostString], pins: pins,
                                       mode: .enforce, now: 1_800_000_000)
            }
        }
    }
}

@main
enum FuzzKnownHostsMain {
    static func main() { FuzzDriver.main(callback: fuzzKnownHostsOneInput, check: FuzzKnownHosts.run) }
}

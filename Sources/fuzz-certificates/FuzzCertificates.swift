import FleetTrustCore
import FuzzDriver

/// libFuzzer target for the TLS certificate reader and the TLS judgement: any bytes a server
/// sends as a certificate (and as a chain of two) must be read or refused without a crash, and
/// a judged endpoint always has a status from the TLS set.
///
/// Built with `-DLIBFUZZER -sanitize=fuzzer` the program runs libFuzzer's driver; built
/// normally, it replays inputs (files named on the command line) to reproduce a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCertificatesOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzCertificates.run(FuzzDriver.bytes(data, size))
    return 0
}

enum FuzzCertificates {
    static let judge = FleetJudge(knownHosts: KnownHosts(files: []), pins: nil)

    static func run(_ bytes: [UInt8]) {
        if let certificate = try? TLSCertificate(der: bytes) {
            precondition(certificate.der == bytes, "a read certificate keeps its bytes")
            precondition(certificate.spkiSHA256.utf8.count == 44, "an SPKI pin is 32 bytes in base64")
        }
        let half = bytes.count / 2
        let chains = [[bytes], [Array(bytes[..<half]), Array(bytes[half...])]]
        var host = InventoryHost(name: "fuzz.example:443/tls", address: "fuzz.example", port: 443)
        host.endpoint = .tls(TLSEndpoint(serverName: "fuzz.example"))
        for chain in chains {
            let handshake = TLSHandshake(version: "TLSv1.3", cipher: "x", serverName: "fuzz.example", chain: chain, ocspStapled: false)
            let result = ProbeResult(host: host.name, port: 443, proof: .tls(handshake))
            let judged = judge.judge(host, result, now: 1_800_000_000)
            let statuses: Set<HostStatus> = [.trusted, .untrusted, .expired, .nameMismatch, .error]
            precondition(statuses.contains(judged.status), "unexpected status \(judged.status)")
            _ = JudgementWords.reason(judged)
        }
    }
}

@main
enum FuzzCertificatesMain {
    static func main() { FuzzDriver.main(callback: fuzzCertificatesOneInput, check: FuzzCertificates.run) }
}

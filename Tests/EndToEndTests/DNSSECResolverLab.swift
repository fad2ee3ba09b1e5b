import Foundation
import XCTest
import FleetTrustTestFleet

/// A validating resolver on loopback for the SSHFP tests: `unbound` on port 53 of a 127.53.x.y
/// address, serving two zones from files (`auth-zone`, validated as if fetched from upstream):
/// one signed with BIND's `dnssec-keygen`/`dnssec-signzone` and anchored (`trust-anchor-file`
/// with its DS set), so its answers carry the AD bit, and one left unsigned, so its answers do
/// not. A resolv.conf naming it, with or without `options trust-ad`, goes to a mount namespace
/// (`SSHConfigOracleLab`). The resolver is stopped by its PID. About 10 s with `ssh` and a scan:
/// its suite runs in `make test-integration`.
final class DNSSECResolverLab {
    let address: String
    private let directory: String
    private var unbound: SpawnedProcess?

    /// `signed` and `unsigned` are a zone name (`fleet.example`) and its records (relative names).
    init(directory: String, signed: (zone: String, records: String), unsigned: (zone: String, records: String)) throws {
        for tool in ["/usr/sbin/unbound", "/usr/bin/dnssec-keygen", "/usr/bin/dnssec-signzone"] where !FileManager.default.isExecutableFile(atPath: tool) {
            let message = "\(tool) is missing: apt-get install unbound bind9-utils (make test-integration does)"
            // Where the suite was asked for, a missing resolver is a failure, never a pass.
            if ProcessInfo.processInfo.environment["FLEETTRUST_INTEGRATION"] != nil {
                XCTFail(message)
                throw TestFleetError.toolFailed(message)
            }
            throw XCTSkip(message)
        }
        self.directory = directory
        address = Self.resolverAddress()
        let signedFile = try sign(signed.zone, zoneText(signed.zone, signed.records))
        let unsignedFile = directory + "/\(unsigned.zone).zone"
        try zoneText(unsigned.zone, unsigned.records).write(toFile: unsignedFile, atomically: true, encoding: .utf8)
        let config = directory + "/unbound.conf"
        try ("""
            server:
              interface: \(address)
              port: 53
              do-daemonize: no
              username: ""
              chroot: ""
              directory: "\(directory)"
              pidfile: ""
              use-syslog: no
              logfile: ""
              do-ip6: no
              access-control: 127.0.0.0/8 allow
              module-config: "validator iterator"
              trust-anchor-file: "\(directory)/dsset-\(signed.zone)."
              do-not-query-localhost: no

            """ + [(signed.zone, signedFile), (unsigned.zone, unsignedFile)].map { zone, file in
                // Served as if fetched from upstream, so the validator judges it.
                "auth-zone:\n  name: \"\(zone).\"\n  zonefile: \"\(file)\"\n  for-upstream: yes\n  for-downstream: no\n  fallback-enabled: no\n"
            }.joined()).write(toFile: config, atomically: true, encoding: .utf8)
        let log = directory + "/unbound.log"
        let process = try SpawnedProcess("/usr/sbin/unbound", ["-d", "-c", config], stderrPath: log)
        unbound = process
        let deadline = Date().addingTimeInterval(10)
        while !Loopback.accepts(address: address, port: 53) {
            guard process.isRunning, Date() < deadline else {
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                stop()
                throw TestFleetError.toolFailed("unbound on \(address): \(text)")
            }
            usleep(10_000)
        }
    }

    /// A loopback address for a test's resolver on port 53 (resolv.conf takes no port), apart from
    /// other test processes' by PID and chance.
    static func resolverAddress() -> String {
        "127.53.\(getpid() % 200 + 1).\(UInt8.random(in: 2...250))"
    }

    func stop() {
        unbound?.terminate()
        unbound = nil
    }

    /// A resolv.conf naming only this resolver; glibc keeps the AD bit only with `trust-ad`.
    func resolvConf(trustAD: Bool) throws -> String {
        let path = directory + "/resolv-\(trustAD ? "trust-ad" : "plain").conf"
        try "nameserver \(address)\noptions timeout:2 attempts:1\(trustAD ? " trust-ad" : "")\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func zoneText(_ zone: String, _ records: String) -> String {
        "$TTL 300\n@ IN SOA ns.\(zone). admin.\(zone). 1 3600 600 86400 300\n@ IN NS ns.\(zone).\nns IN A \(address)\n" + records
    }

    /// Signs the zone with a fresh ZSK and KSK (ECDSA P-256); returns the signed file. The DS set
    /// (`dsset-ZONE.`) is the trust anchor.
    private func sign(_ zone: String, _ text: String) throws -> String {
        func keygen(_ extra: [String]) throws -> String {
            let output = try Tool.run("/usr/bin/dnssec-keygen", ["-q", "-K", directory, "-a", "ECDSAP256SHA256", "-n", "ZONE"] + extra + [zone])
            guard output.status == 0 else { throw TestFleetError.toolFailed("dnssec-keygen: \(output.stderr)") }
            return directory + "/" + output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let zsk = try keygen([]), ksk = try keygen(["-f", "KSK"])
        let keys = try [zsk, ksk].map { try String(contentsOfFile: $0 + ".key", encoding: .utf8) }.joined()
        let file = directory + "/\(zone).zone", signed = file + ".signed"
        try (text + keys).write(toFile: file, atomically: true, encoding: .utf8)
        let output = try Tool.run("/usr/bin/dnssec-signzone", ["-q", "-d", directory, "-o", zone, "-k", ksk, "-f", signed, file, zsk + ".key"])
        guard output.status == 0 else { throw TestFleetError.toolFailed("dnssec-signzone: \(output.stderr)") }
        return signed
    }
}

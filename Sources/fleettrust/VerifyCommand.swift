import ArgumentParser
import Foundation
import FleetTrustCore

/// `fleettrust verify`: what `ssh` would decide for one host key, with the evidence.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Judge one host key the way ssh would, against known_hosts and pins.",
        discussion: """
            Prints OpenSSH's answer (trusted, trusted-by-ca, new, changed, revoked, ip-mismatch) \
            or pin-mismatch, and the file lines behind it. Exit status, as for scan: 0 trusted, 1 not \
            trusted (new), 2 changed, revoked, pin-mismatch or invalid-certificate, 64 bad usage or an \
            input that cannot be read.
            """)

    @Argument(help: "The host name as given to ssh (after any HostName substitution).")
    var host: String

    @Argument(help: "The key: a .pub or certificate file, or an OpenSSH key line ('TYPE BASE64').")
    var key: String

    @OptionGroup var knownHosts: KnownHostsOptions

    @OptionGroup var pins: PinOptions

    @Option(help: "The port ssh connects to (other than 22, names are looked up as [host]:port).")
    var port: Int = 22

    @Option(name: .customLong("lookup-name"), help: ArgumentHelp(
        "Extension: another name to consult when the host name finds nothing. Repeatable.", valueName: "name"))
    var lookupNames: [String] = []

    @Option(name: .customLong("check-host-ip"), help: ArgumentHelp("Also check this address, as CheckHostIP=yes does.", valueName: "address"))
    var checkHostIP: String?

    @Option(name: .customLong("host-key-alias"), help: ArgumentHelp("Look up this name instead, as HostKeyAlias does.", valueName: "alias"))
    var hostKeyAlias: String?

    @Flag(help: "Extension: let address networks (192.0.2.0/24) in host fields match addresses.")
    var cidrPatterns = false

    @Flag(help: "Print one JSON object.")
    var json = false

    func validate() throws {
        guard (1...65535).contains(port) else { throw ValidationError("--port must be between 1 and 65535") }
    }

    func run() throws {
        knownHosts.missingWarnings.forEach(printError)
        let report: VerifyReport
        do {
            let presented = try HostKeyArgument.read(key, path: expandTilde(key))
            let files = try KnownHosts.read(paths: knownHosts.all, options: KnownHosts.Options(cidrPatterns: cidrPatterns))
            report = VerifyReport(host: host, port: port, key: presented, hostKeyAlias: hostKeyAlias, checkHostIP: checkHostIP,
                                  additionalNames: lookupNames, knownHosts: files, pins: try pins.load(), pinMode: pins.pinsMode)
        } catch {
            printError("\(error)")
            throw ExitCode(64)
        }
        print(json ? report.json : report.text)
        if report.exitStatus != 0 { throw ExitCode(report.exitStatus) }
    }
}

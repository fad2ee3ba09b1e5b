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

    @Option(help: "The port ssh connects to (other than 22, names are looked up as [host]:port); HOST:PORT or [HOST]:PORT says it too.")
    var port: Int?

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
        if let port { guard (1...65535).contains(port) else { throw ValidationError("--port must be between 1 and 65535") } }
        let endpoint = Self.endpoint(host)
        if let given = port, let written = endpoint.port, given != written {
            throw ValidationError("\(Sanitizer.clean(host)) names port \(written) and --port says \(given)")
        }
    }

    /// HOST, HOST:PORT (as the scan table prints an endpoint) or [HOST]:PORT (as known_hosts
    /// writes it); an address with several colons (IPv6) is a host alone.
    static func endpoint(_ text: String) -> (host: String, port: Int?) {
        var host = Substring(text), port: Substring?
        if text.hasPrefix("["), let close = text.lastIndex(of: "]"), text[close...].hasPrefix("]:") {
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard let port, let number = Int(port), (1...65535).contains(number), port.allSatisfy(\.isASCII) else { return (text, nil) }
        return (String(host), number)
    }

    func run() throws {
        knownHosts.missingWarnings.forEach(printError)
        let report: VerifyReport
        do {
            let presented = try HostKeyArgument.read(key, path: expandTilde(key))
            let files = try KnownHosts.read(paths: knownHosts.all, options: KnownHosts.Options(cidrPatterns: cidrPatterns))
            let endpoint = Self.endpoint(host)
            report = VerifyReport(host: endpoint.host, port: endpoint.port ?? port ?? 22, key: presented, hostKeyAlias: hostKeyAlias, checkHostIP: checkHostIP,
                                  additionalNames: lookupNames, knownHosts: files, pins: try pins.load(), pinMode: pins.pinsMode)
        } catch {
            printError("\(error)")
            throw ExitCode(64)
        }
        print(json ? report.json : report.text)
        if report.exitStatus != 0 { throw ExitCode(report.exitStatus) }
    }
}

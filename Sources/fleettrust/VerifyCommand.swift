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

    @Option(name: .customLong("known-hosts"), help: ArgumentHelp(
        "known_hosts file; repeatable. Default: the four files ssh reads, \(DefaultKnownHostsFiles.described).", valueName: "file"))
    var knownHostsFiles: [String] = []

    @Option(help: ArgumentHelp("Pin file with the team's pinned fingerprints.", valueName: "file"))
    var pins: String?

    @Option(help: ArgumentHelp("enforce: a pin mismatch fails; report: it is shown but does not fail.", valueName: "mode"))
    var pinsMode: String = "enforce"

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
        guard let mode = PinMode(rawValue: pinsMode) else { throw ValidationError("--pins-mode must be enforce or report") }
        _ = mode
    }

    func run() throws {
        let presented: HostKey
        let knownHosts: KnownHosts
        var pinSet: PinSet?
        missingKnownHostsFileWarnings(knownHostsFiles).forEach(printError)
        do {
            presented = try Self.readKey(key)
            let paths = knownHostsFiles.isEmpty
                ? DefaultKnownHostsFiles.all(home: expandTilde("~"))
                : knownHostsFiles.map { NSString(string: $0).expandingTildeInPath }
            knownHosts = try KnownHosts.read(paths: paths, options: KnownHosts.Options(cidrPatterns: cidrPatterns))
            if let pins { pinSet = try PinSet.read(path: NSString(string: pins).expandingTildeInPath) }
        } catch {
            printError("\(error)")
            throw ExitCode(64)
        }
        var inventoryHost = InventoryHost(name: host, port: port, hostKeyAlias: hostKeyAlias)
        inventoryHost.sshOptions.checkHostIP = checkHostIP != nil
        let probe = ProbeResult(host: host, port: port, peerAddress: checkHostIP, keys: [DiscoveredKey(key: presented)])
        let judged = FleetJudge(knownHosts: knownHosts, pins: pinSet, pinMode: PinMode(rawValue: pinsMode)!)
            .judge(inventoryHost, probe, additionalNames: lookupNames)
        let report = VerifyReport(judged: judged)
        print(json ? report.json : report.text)
        if judged.status.alarmLevel != 0 { throw ExitCode(judged.status.alarmLevel) }
    }

    /// A key file's first key line, or the argument itself as a key line.
    static func readKey(_ argument: String) throws -> HostKey {
        let path = expandTilde(argument)
        guard FileManager.default.fileExists(atPath: path) else {
            // A key line has a space between its type and its base64; a path never needs one.
            if !argument.contains(" ") && (argument.contains("/") || argument.hasSuffix(".pub")) {
                throw CommandFailure.unreadableInput("\(Sanitizer.clean(argument, limit: 200)): no such file (given as the key file)")
            }
            do {
                return try HostKey(openSSHLine: argument)
            } catch {
                throw CommandFailure.unreadableInput("\(Sanitizer.clean(argument, limit: 200)): neither a key file nor a key line (\(error))")
            }
        }
        let bytes: [UInt8]
        do {
            bytes = try InputFile.read(path, role: "key file", limit: 1 << 20)
        } catch {
            throw CommandFailure.unreadableInput(error.description)
        }
        let line = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
            .first { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        do {
            return try HostKey(openSSHLine: line ?? "")
        } catch {
            throw CommandFailure.unreadableInput("\(Sanitizer.clean(argument, limit: 200)): \(error)")
        }
    }
}

/// What `verify` prints, as text or JSON: a rendering of the key's judgement.
struct VerifyReport {
    let judged: JudgedHost

    var key: JudgedKey { judged.keys[0] }

    /// The verdict word: the key's (OpenSSH's, or `invalid-certificate`), or `pin-mismatch` when an
    /// enforced pin fails (a revocation or a changed key still wins).
    var verdict: String {
        judged.status == .pinMismatch ? HostStatus.pinMismatch.rawValue : key.verdict.rawValue
    }

    var summary: String { JudgementWords.key(key, lookup: judged.lookup) }

    var text: String {
        let first = judged.status == .pinMismatch ? "\(verdict): no pinned key was presented; known_hosts says \(summary)" : summary
        var lines = [first, "key: \(key.typeName) \(key.key?.sha256Fingerprint ?? "")"]
        lines += JudgementWords.evidence(key).map { "evidence: \($0)" }
        if judged.status == .error { lines.append("ssh would refuse: \(JudgementWords.reason(judged))") }
        if judged.pin.verdict != .unpinned {
            lines.append("pin: \(judged.pin.verdict.rawValue)")
            lines += judged.pin.evidence.map { "pin evidence: \($0.sentence)" }
        }
        return lines.map { Sanitizer.clean($0, limit: 1024) }.joined(separator: "\n")
    }

    struct JSONShape: Encodable {
        var verdict: String
        var status: HostStatus
        var knownHostsVerdict: String
        var lookup: String
        var keyType: String
        var fingerprint: String
        var summary: String
        var viaBareNameRetry: Bool
        var judgedAsPlainKey: Bool
        var certificateProblem: CertificateProblem?
        var viaAdditionalName: String?
        var evidence: [TrustEvidence]
        var pin: String
        var pinEvidence: [TrustEvidence]
    }

    var json: String {
        let judgement = key.judgement
        let shape = JSONShape(verdict: verdict, status: judged.status, knownHostsVerdict: key.verdict.rawValue,
                              lookup: CleanText(judged.lookup.hostString).value,
                              keyType: key.typeName, fingerprint: key.key?.sha256Fingerprint ?? "", summary: summary,
                              viaBareNameRetry: judgement?.viaBareNameRetry ?? false,
                              judgedAsPlainKey: judgement?.judgedAsPlainKey ?? false,
                              certificateProblem: key.certificateProblem,
                              viaAdditionalName: judgement?.viaAdditionalName.map { CleanText($0).value },
                              evidence: judgement?.evidence ?? [], pin: judged.pin.verdict.rawValue, pinEvidence: judged.pin.evidence)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return String(decoding: (try? encoder.encode(shape)) ?? Data("{}".utf8), as: UTF8.self)
    }
}

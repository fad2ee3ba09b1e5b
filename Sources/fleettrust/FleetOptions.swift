import ArgumentParser
import Foundation
import FleetTrustCore
import FleetTrustSSH

/// The options `fleettrust --inventory` (the dashboard) and `fleettrust scan` share, so that what
/// the dashboard shows and what `scan` prints always agree.
struct FleetOptions: ParsableArguments {
    @Option(name: .customLong("inventory"), help: ArgumentHelp(
        "Inventory: a plain host list, Ansible INI or YAML, ansible-inventory --list JSON, an ssh_config, an Ansible inventory directory, or an executable inventory script (run with --list); '-' reads standard input. Repeatable.",
        valueName: "file"))
    var inventories: [String] = []

    @Option(help: ArgumentHelp("Inventory format instead of detecting it: plain, ini, yaml, json, ssh-config.", valueName: "format"))
    var inventoryFormat: String?

    @Option(help: ArgumentHelp("Only hosts in this inventory group (children included). Repeatable.", valueName: "name"))
    var group: [String] = []

    @Option(name: .customLong("known-hosts"), help: ArgumentHelp(
        "known_hosts file to judge against and save to (the first one). Repeatable. "
            + "Default: the four files ssh reads, \(DefaultKnownHostsFiles.described) (new entries go to the first).", valueName: "file"))
    var knownHostsFiles: [String] = []

    @Option(name: .customLong("pins"), help: ArgumentHelp("Pin file: the team's pinned fingerprints (format: FILE FORMATS in man fleettrust).", valueName: "file"))
    var pinFile: String?

    var pinFiles: [String] { pinFile.map { [$0] } ?? [] }

    @Option(help: ArgumentHelp("enforce: a pin mismatch fails the host; report: it is shown but does not fail.", valueName: "mode"))
    var pinsMode: String = "enforce"

    @Option(name: .customLong("policy"), help: ArgumentHelp(
        "Policy file: lines 'PATTERNS POLICY' giving hosts the standard, pinned, pin-only, ca or off policy (first match wins). "
            + "Default: $XDG_CONFIG_HOME/fleettrust/policy when it exists. The inventory variable fleettrust_policy wins over it.",
        valueName: "file"))
    var policyFile: String?

    @Option(name: .customLong("tls-ca-file"), help: ArgumentHelp(
        "PEM file of CA certificates that TLS endpoints' chains must lead to, instead of the system store. Repeatable.",
        valueName: "file"))
    var tlsCAFiles: [String] = []

    // Unconditional: `--cert-warn-days -1` takes -1 as its value (and is refused with the range),
    // not as an unknown option leaving the value missing.
    @Option(parsing: .unconditional,
            help: ArgumentHelp("A host certificate or TLS certificate expiring within this many days is flagged expires-soon.", valueName: "days"))
    var certWarnDays: Int = 30

    @Option(parsing: .unconditional, help: "Seconds allowed for each connection attempt (more than 0, at most 3600; default 5).",
            transform: parseTimeout)
    var timeout: Double = 5

    @Option(help: "The most hosts probed at once (each with up to three connections; fewer if the open-file limit cannot hold them). Each server gets at most 8 connections at once whatever this says.")
    var concurrency: Int = 512

    @Flag(help: "Probe hosts that the inventory sends through ProxyJump or ProxyCommand (ssh_config, or Ansible's ssh arguments) directly, for when fleettrust runs where they are reachable (on the bastion itself). Without it they are probed through their route, as ssh goes: your ssh logs in to each bastion once per scan (StrictHostKeyChecking=yes, BatchMode=yes) and every key exchange runs end to end through it.")
    var direct = false

    @Flag(name: .customLong("allow-inventory-proxy-command"), help: ArgumentHelp(
        "Run a ProxyCommand written in an inventory (Ansible's -o ProxyCommand=, an ssh_config given as the inventory). "
            + "Without it such a host is refused: an inventory is data, and only your own ssh configuration's commands are run."))
    var allowInventoryProxyCommand = false

    @Option(name: .customLong("ssh-config"), help: ArgumentHelp(
        "ssh_config that hosts from other inventories than an ssh_config are judged under (their HostName, HostKeyAlias, known_hosts files, algorithms…, matched against the name ssh is given: the listed host, ansible_host) and whose bastions (ProxyJump hops) are resolved through (ssh -F). "
            + "Default: ssh's own (~/.ssh/config, then /etc/ssh/ssh_config). Hosts from an ssh_config inventory use that file.", valueName: "file"))
    var sshConfig: String?

    /// The probe pool's settings: concurrency, timeout, and how routes are followed.
    var poolSettings: ProbePool.Settings {
        ProbePool.Settings(concurrency: concurrency, timeout: .milliseconds(Int(timeout * 1000)),
                           routes: BastionConnections.Settings(configFile: sshConfig.map(expandTilde)))
    }

    @Flag(help: "Also count entries recorded under the inventory alias as evidence (an extension; off: trust only what ssh accepts).")
    var additionalNames = false

    @Option(help: ArgumentHelp("Write new known_hosts names hashed: yes, no, or auto (what HashKnownHosts says in your ssh configuration, asked of `ssh -G`).",
                               valueName: "yes|no|auto"))
    var hashKnownHosts: String = "auto"

    /// Whether new known_hosts entries are written hashed.
    func hashesKnownHosts() async -> Bool {
        switch hashKnownHosts {
        case "yes": return true
        case "no": return false
        default: return await SSHClientConfiguration.hashKnownHosts()
        }
    }

    func validateShared() throws {
        guard (1...1024).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 1024") }
        if let inventoryFormat, InventoryFormat(argument: inventoryFormat) == nil {
            throw ValidationError("--inventory-format must be plain, ini, yaml, json or ssh-config")
        }
        guard ["enforce", "report"].contains(pinsMode) else { throw ValidationError("--pins-mode must be enforce or report") }
        guard ["yes", "no", "auto"].contains(hashKnownHosts) else { throw ValidationError("--hash-known-hosts must be yes, no or auto") }
        guard (0...3650).contains(certWarnDays) else { throw ValidationError("--cert-warn-days must be between 0 and 3650") }
    }

    /// The known_hosts files in use for hosts whose configuration names none: as given, or
    /// OpenSSH's defaults (user files, then global files).
    var effectiveKnownHostsFiles: [String] { defaultUserKnownHostsFiles + defaultGlobalKnownHostsFiles }

    /// `--known-hosts`, or OpenSSH's default `UserKnownHostsFile`.
    var defaultUserKnownHostsFiles: [String] {
        if !knownHostsFiles.isEmpty { return knownHostsFiles.map(expandTilde) }
        return DefaultKnownHostsFiles.user(home: expandTilde("~"))
    }

    /// None with `--known-hosts`, else OpenSSH's default `GlobalKnownHostsFile`.
    var defaultGlobalKnownHostsFiles: [String] {
        knownHostsFiles.isEmpty ? DefaultKnownHostsFiles.global : []
    }

    /// The `--known-hosts` files that do not exist, each once: they are judged as empty, as `ssh`
    /// judges a missing file, but a mistyped path would make every host look new, so the
    /// commands warn about them.
    var missingKnownHostsWarnings: [String] { missingKnownHostsFileWarnings(knownHostsFiles) }

    /// Every known_hosts file these hosts are judged against.
    func knownHostsPaths(for hosts: [InventoryHost]) -> [String] {
        KnownHostsSets.allPaths(userFiles: defaultUserKnownHostsFiles, globalFiles: defaultGlobalKnownHostsFiles, hosts: hosts)
    }

    /// The judge for these hosts: every known_hosts file they use read once, the pins, the options.
    /// A file that cannot be read, or a pin file with a bad line, is exit 64.
    func loadJudge(for hosts: [InventoryHost]) throws -> FleetJudge {
        let sets: KnownHostsSets
        do {
            sets = try KnownHostsSets.read(userFiles: defaultUserKnownHostsFiles, globalFiles: defaultGlobalKnownHostsFiles,
                                           hosts: hosts)
        } catch {
            throw CommandFailure.unreadableInput("\(error)")
        }
        var judge = FleetJudge(knownHosts: sets, pins: try loadPins(), pinMode: PinMode(rawValue: pinsMode) ?? .enforce,
                               useAdditionalNames: additionalNames, policies: PolicyResolver(file: try loadPolicies()))
        judge.certificateWarnDays = certWarnDays
        // A RevokedHostKeys file that cannot be used is each naming host's error, as for `ssh`, not exit 64.
        judge.revocationLists = RevocationLists.read(hosts: hosts)
        if !tlsCAFiles.isEmpty {
            do {
                judge.tlsAnchors = try TLSTrustAnchors.files(tlsCAFiles.map(expandTilde))
            } catch {
                throw CommandFailure.unreadableInput("--tls-ca-file \(error)")
            }
        }
        return judge
    }

    /// The policy file in use: `--policy`, else the default path when a file is there.
    var effectivePolicyFile: String? {
        if let policyFile { return expandTilde(policyFile) }
        let fallback = PolicyResolver.defaultPath(environment: ProcessInfo.processInfo.environment)
        return FileManager.default.fileExists(atPath: fallback) ? fallback : nil
    }

    /// Reads the policy file; a file with a bad line is refused (exit 64), every bad line named.
    func loadPolicies() throws -> PolicyFile? {
        guard let path = effectivePolicyFile else { return nil }
        do {
            return try PolicyFile.read(path: path)
        } catch {
            throw CommandFailure.unreadableInput("\(error)")
        }
    }

    /// Inventory read options carrying the user's ssh configuration (`--ssh-config`, else
    /// `~/.ssh/config` and `/etc/ssh/ssh_config`), whose host-key settings apply to hosts of every
    /// inventory that is not an ssh_config, as the `ssh` the user runs applies them.
    func readOptionsWithSSHConfiguration() throws -> InventoryReadOptions {
        var options = InventoryReadOptions()
        options.allowInventoryProxyCommands = allowInventoryProxyCommand
        let files = SSHUserConfiguration.defaultFiles(explicit: sshConfig.map(expandTilde), options: options)
        do {
            let (configuration, diagnostics) = try SSHUserConfiguration.read(files: files, options: options)
            // Only what ssh itself would refuse: its files are not fleettrust's to lint.
            diagnostics.filter { $0.severity == .error }.forEach { printError($0.description) }
            options.sshConfiguration = configuration
        } catch {
            throw CommandFailure.unreadableInput("--ssh-config \(error)")
        }
        return options
    }

    /// Reads every inventory, prints each problem as `file:line: message` on standard error,
    /// and returns the hosts that could be read (filtered by `--group`).
    func loadInventory() throws -> Inventory {
        guard !inventories.isEmpty else { throw ValidationError("give an inventory with --inventory FILE") }
        missingKnownHostsWarnings.forEach(printError)
        let loader = InventoryLoader(format: inventoryFormat.flatMap(InventoryFormat.init(argument:)),
                                     options: try readOptionsWithSSHConfiguration())
        var inventory: Inventory
        do {
            inventory = try loader.loadWaiting(inventories.map { $0 == "-" ? $0 : expandTilde($0) })
        } catch {
            throw CommandFailure.unreadableInput(error.description)
        }
        for diagnostic in inventory.diagnostics { printError(diagnostic.description) }
        if inventory.skipped > 0 {
            printError("skipped \(inventory.skipped) inventory entr\(inventory.skipped == 1 ? "y" : "ies") with errors; going on with \(inventory.hosts.count) host\(inventory.hosts.count == 1 ? "" : "s")")
        }
        if !group.isEmpty {
            var seen = Set<Int>()
            var selected: [InventoryHost] = []
            for name in group {
                for host in inventory.hosts(inGroup: name) where seen.insert(host.hashValue).inserted { selected.append(host) }
            }
            inventory.hosts = inventory.hosts.filter { host in selected.contains(host) }
        }
        if direct {
            for index in inventory.hosts.indices { inventory.hosts[index].proxy = nil }
        }
        guard !inventory.hosts.isEmpty else {
            throw CommandFailure.unreadableInput("no hosts to check in \(inventories.joined(separator: ", "))"
                + (group.isEmpty ? "" : " (groups: \(group.joined(separator: ", ")))"))
        }
        return inventory
    }
}

/// Failures that end a command with a documented exit status and one clear sentence.
enum CommandFailure: Error, CustomStringConvertible {
    /// Bad usage or input that cannot be read: exit 64.
    case unreadableInput(String)

    var description: String {
        switch self {
        case .unreadableInput(let message): return message
        }
    }
}

/// One warning for each `--known-hosts` file that does not exist (each named once): it is judged
/// as empty, as `ssh` judges a missing file, but a mistyped path would make every host look new.
func missingKnownHostsFileWarnings(_ files: [String]) -> [String] {
    var seen = Set<String>()
    return files.map(expandTilde).filter { seen.insert($0).inserted && InputFile.isMissing($0) }
        .map { "warning: \($0): no such known_hosts file; judging as if it were empty, as ssh does" }
}

/// `--timeout SECONDS` (and discover's `-T`): a number of seconds, more than 0 and at most an hour;
/// a bad value is refused with the accepted range.
func parseTimeout(_ text: String) throws -> Double {
    guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
        throw ValidationError("the timeout must be a number of seconds, more than 0 and at most 3600")
    }
    return seconds
}

func expandTilde(_ path: String) -> String {
    guard path == "~" || path.hasPrefix("~/") else { return path }
    let home = getpwuid(getuid()).map { String(cString: $0.pointee.pw_dir) } ?? NSHomeDirectory()
    return home + path.dropFirst()
}

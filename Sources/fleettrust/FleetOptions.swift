import ArgumentParser
import Foundation
import FleetTrustCore
import FleetTrustSSH

/// The options `fleettrust --inventory` (the dashboard), `scan` and `sync` share, so that what
/// the dashboard shows and what `scan` prints always agree.
struct FleetOptions: ParsableArguments {
    @OptionGroup var inventory: InventoryOptions

    @Option(help: ArgumentHelp("Only hosts in this inventory group (children included). Repeatable.", valueName: "name"))
    var group: [String] = []

    @OptionGroup var knownHosts: KnownHostsOptions

    @OptionGroup var pins: PinOptions

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

    @Option(parsing: .unconditional, help: "Seconds allowed for each connection attempt (more than 0, at most 3600; default 5). The connection that decides which key ssh meets is never retried: under load it waits once more as long.",
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

    @Flag(help: "Also count entries recorded under the inventory alias as evidence (an extension; off: trust only what ssh accepts).")
    var additionalNames = false

    @Option(help: ArgumentHelp("Write new known_hosts names hashed: yes, no, or auto (the default: what HashKnownHosts says in your ssh configuration, asked of `ssh -G`).",
                               valueName: "yes|no|auto"), transform: choice("--hash-known-hosts", "yes, no or auto"))
    var hashKnownHosts: HashChoice = .auto

    /// The probe pool's settings: concurrency, timeout, and how routes are followed.
    var poolSettings: ProbePool.Settings {
        ProbePool.Settings(concurrency: concurrency, timeout: .milliseconds(Int(timeout * 1000)),
                           routes: BastionConnections.Settings(configFile: sshConfig.map(expandTilde)))
    }

    func validateShared() throws {
        guard (1...1024).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 1024") }
        guard (0...3650).contains(certWarnDays) else { throw ValidationError("--cert-warn-days must be between 0 and 3650") }
    }

    /// The files judged against, with their options.
    var trustFiles: TrustFiles {
        var files = TrustFiles(userKnownHosts: knownHosts.chosen.user, globalKnownHosts: knownHosts.chosen.global, pinFile: pins.path,
                               pinMode: pins.pinsMode, policyFile: effectivePolicyFile, tlsCAFiles: tlsCAFiles.map(expandTilde),
                               additionalNames: additionalNames, certificateWarnDays: certWarnDays)
        files.sshfpResolver = SystemSSHFPResolver()
        return files
    }

    /// The judge for these hosts; a file that cannot be read, or a pin file with a bad line, is exit 64.
    func loadJudge(for hosts: [InventoryHost]) throws -> FleetJudge {
        do { return try trustFiles.judge(for: hosts) } catch { throw CommandFailure.unreadableInput(error.description) }
    }

    /// The policy file in use: `--policy`, else the default path when a file is there.
    var effectivePolicyFile: String? {
        if let policyFile { return expandTilde(policyFile) }
        let fallback = PolicyResolver.defaultPath(environment: ProcessInfo.processInfo.environment)
        return FileManager.default.fileExists(atPath: fallback) ? fallback : nil
    }

    /// This machine's ssh configuration (`--ssh-config`, else ssh's own files), under which a
    /// recorded scan is judged as the `ssh` run here would judge it; its problems are printed.
    func replayConfiguration() throws -> InventoryReadOptions {
        do {
            let read = try InventoryReadOptions.underUserConfiguration(explicit: sshConfig.map(expandTilde), allowProxyCommands: false)
            read.errors.forEach { printError($0.description) }
            return read.options
        } catch {
            throw CommandFailure.unreadableInput("--ssh-config \(error)")
        }
    }

    /// Reads the selected inventory hosts (see `InventoryOptions.load`).
    func loadInventory() throws -> Inventory {
        guard !inventory.files.isEmpty else { throw ValidationError("give an inventory with --inventory FILE") }
        knownHosts.missingWarnings.forEach(printError)
        return try inventory.load(groups: group, direct: direct, sshConfig: sshConfig, allowProxyCommands: allowInventoryProxyCommand)
    }
}

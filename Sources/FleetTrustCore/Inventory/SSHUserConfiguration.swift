import Foundation

/// The user's own OpenSSH client configuration (`ssh -F FILE`'s file, else `~/.ssh/config` then
/// `/etc/ssh/ssh_config`), applied to hosts from every inventory format that is not itself an
/// ssh_config: the `ssh` the user (or Ansible) runs reads it for them, so its `HostName`,
/// `HostKeyAlias`, known_hosts files and algorithm settings change the decision for them too. Its
/// `KnownHostsCommand` is the only command fleettrust runs on a configuration's say-so.
///
/// It is matched against the name `ssh` is given: a plain list's host, Ansible's `ansible_host`.
/// Settings already given on `ssh`'s command line (Ansible's `-o` arguments, its `-o Port` and
/// `-o User`) come first and win, as in `ssh`. `HashKnownHosts` is left to `--hash-known-hosts`,
/// which asks `ssh -G` the same question.
public struct SSHUserConfiguration: Sendable {
    /// The settings of every file in the order `ssh` reads them.
    let segments: [SSHConfigLayout.Segment]
    /// The files read, for messages.
    public let files: [String]

    /// The files `ssh` reads: `explicit` alone (`-F`), else the user's file (when it exists)
    /// then the system's.
    public static func defaultFiles(explicit: String?, options: InventoryReadOptions) -> [String] {
        if let explicit { return [explicit] }
        return [options.homeDirectory + "/.ssh/config", "/etc/ssh/ssh_config"].filter { FileManager.default.isReadableFile(atPath: $0) }
    }

    /// Reads `files` (relative `Include`s of a file under /etc/ssh resolve there, others under
    /// `~/.ssh`, as in `ssh`); each problem is a diagnostic with its line.
    public static func read(files: [String], options: InventoryReadOptions) throws -> (SSHUserConfiguration, [InventoryDiagnostic]) {
        var segments: [SSHConfigLayout.Segment] = []
        var diagnostics: [InventoryDiagnostic] = []
        for file in files {
            // `ssh -F /dev/null` is how people say "no configuration"; it reads as empty here too.
            let data: [UInt8]
            do {
                data = file == "/dev/null" ? [] : try InputFile.read(file, role: "ssh configuration", limit: 16 << 20)
            } catch {
                throw SSHUserConfigurationError(description: error.description)
            }
            var fileOptions = options
            if file.hasPrefix("/etc/ssh/") { fileOptions.includeDirectory = "/etc/ssh" }
            var log = DiagnosticLog(file: file)
            let layout = SSHConfigLayout(contents: String(decoding: data, as: UTF8.self), options: fileOptions, log: &log)
            segments += layout.segments
            diagnostics += log.diagnostics
        }
        return (SSHUserConfiguration(segments: segments, files: files), diagnostics)
    }

    /// A plain list's host as `ssh [-p PORT] [USER@]HOST` reaches it under this configuration.
    func host(_ listed: InventoryHost, port: Int?, options: InventoryReadOptions) -> InventoryHost {
        var settings = SSHHostSettings()
        if let port { settings.apply(.port(port), at: listed.source) }
        if let user = listed.user { settings.apply(.user(user), at: listed.source) }
        collect(into: &settings, hostArgument: listed.address, options: options)
        var host = settings.host(named: listed.name, hostArgument: listed.address, address: settings.address(hostArgument: listed.address),
                                 port: settings.port ?? 22, user: settings.user, options: options)
        host.source = listed.source
        host.format = listed.format
        return host
    }

    /// A recorded host (`scan --replay`) judged here: the host-key settings this configuration
    /// gives `ssh ADDRESS` (the address the scanner reached, its `HostName` already applied) are
    /// the ones the `ssh` run here uses, so they apply: this machine's known_hosts files,
    /// `HostKeyAlias`, algorithms and `KnownHostsCommand` when set, its `RevokedHostKeys` besides
    /// the recorded ones, its unjudged settings besides the recorded ones. The route and address
    /// stay as recorded.
    func recorded(_ host: InventoryHost, options: InventoryReadOptions) -> InventoryHost {
        let here = self.host(InventoryHost(name: host.name, address: host.address, port: host.port, user: host.user),
                             port: host.port, options: options)
        var judged = host
        judged.userKnownHostsFiles = here.userKnownHostsFiles
        judged.sshOptions.noUserKnownHostsFile = here.sshOptions.noUserKnownHostsFile
        judged.sshOptions.globalKnownHostsFiles = here.sshOptions.globalKnownHostsFiles
        if let alias = here.hostKeyAlias { judged.hostKeyAlias = alias }
        let mine = here.sshOptions
        if let value = mine.hostKeyAlgorithms { judged.sshOptions.hostKeyAlgorithms = value }
        if let value = mine.caSignatureAlgorithms { judged.sshOptions.caSignatureAlgorithms = value }
        if let value = mine.kexAlgorithms { judged.sshOptions.kexAlgorithms = value }
        if let value = mine.ciphers { judged.sshOptions.ciphers = value }
        if let value = mine.macs { judged.sshOptions.macs = value }
        if let value = mine.requiredRSASize { judged.sshOptions.requiredRSASize = value }
        if let value = mine.checkHostIP { judged.sshOptions.checkHostIP = value }
        if let value = mine.knownHostsCommand { judged.sshOptions.knownHostsCommand = value }
        if let value = mine.fingerprintHash { judged.sshOptions.fingerprintHash = value }
        if let value = mine.noHostAuthenticationForLocalhost { judged.sshOptions.noHostAuthenticationForLocalhost = value }
        if let value = mine.verifyHostKeyDNS { judged.sshOptions.verifyHostKeyDNS = value }
        if let value = mine.addressFamily { judged.sshOptions.addressFamily = value }
        if let revoked = mine.revokedHostKeys {
            judged.sshOptions.revokedHostKeys = Array(Set((judged.sshOptions.revokedHostKeys ?? []) + revoked)).sorted()
        }
        if let unjudged = mine.unjudged { judged.sshOptions.unjudged = (judged.sshOptions.unjudged ?? []) + unjudged }
        return judged
    }

    /// Adds this configuration's settings for `ssh hostArgument` to those already given.
    func collect(into settings: inout SSHHostSettings, hostArgument: String, options: InventoryReadOptions) {
        SSHConfigPasses.collect(alias: hostArgument, segments: segments, options: options, into: &settings,
                                from: SSHLineOwnership.userConfiguration) { option in
            if case .hashKnownHosts = option { return false }
            return true
        }
    }
}

/// Why the user's ssh configuration could not be read: one sentence naming the file.
public struct SSHUserConfigurationError: Error, CustomStringConvertible {
    public var description: String
}

/// The files a fleet is judged against (known_hosts, pins, policy, TLS anchors) and the options
/// that go with them: read here, once per judgement, for `scan`, `sync` and the dashboard, whose
/// watch list is these same files.
public struct TrustFiles: Sendable {
    /// The known_hosts files for hosts whose configuration names none (`DefaultKnownHostsFiles.chosen`).
    public var userKnownHosts: [String]
    public var globalKnownHosts: [String]
    public var pinFile: String?
    public var pinMode: PinMode
    public var policyFile: String?
    /// PEM files of the CAs TLS chains must lead to; empty: the system store.
    public var tlsCAFiles: [String]
    /// Count entries under the inventory alias as evidence (an extension).
    public var additionalNames: Bool
    public var certificateWarnDays: Int
    /// Where hosts with `VerifyHostKeyDNS` have their SSHFP records looked up (the system
    /// resolver, given by the command); nil: they are judged as if DNS had none.
    public var sshfpResolver: (any SSHFPResolving)?

    public init(userKnownHosts: [String], globalKnownHosts: [String], pinFile: String? = nil, pinMode: PinMode = .enforce,
                policyFile: String? = nil, tlsCAFiles: [String] = [], additionalNames: Bool = false, certificateWarnDays: Int = 30) {
        self.userKnownHosts = userKnownHosts
        self.globalKnownHosts = globalKnownHosts
        self.pinFile = pinFile
        self.pinMode = pinMode
        self.policyFile = policyFile
        self.tlsCAFiles = tlsCAFiles
        self.additionalNames = additionalNames
        self.certificateWarnDays = certificateWarnDays
    }

    /// A file that cannot be read, or a pin or policy file with a bad line (every one named).
    public struct Unreadable: Error, CustomStringConvertible {
        public var description: String
    }

    /// The judge for these hosts: every known_hosts file they use read once, the pins, the policy.
    /// A `RevokedHostKeys` file that cannot be used is each naming host's error, as for `ssh`.
    public func judge(for hosts: [InventoryHost]) throws(Unreadable) -> FleetJudge {
        do {
            let sets = try KnownHostsSets.read(userFiles: userKnownHosts, globalFiles: globalKnownHosts, hosts: hosts)
            let pins = try pinFile.map { try PinSet.read(path: $0) }
            let policies = try policyFile.map { try PolicyFile.read(path: $0) }
            var judge = FleetJudge(knownHosts: sets, pins: pins, pinMode: pinMode, useAdditionalNames: additionalNames,
                                   policies: PolicyResolver(file: policies))
            judge.certificateWarnDays = certificateWarnDays
            judge.revocationLists = RevocationLists.read(hosts: hosts)
            if let sshfpResolver { judge.sshfpAnswers = sshfpResolver.sshfpAnswers(for: hosts) }
            if !tlsCAFiles.isEmpty {
                do { judge.tlsAnchors = try TLSTrustAnchors.files(tlsCAFiles) } catch { throw Unreadable(description: "--tls-ca-file \(error)") }
            }
            return judge
        } catch let unreadable as Unreadable {
            throw unreadable
        } catch {
            throw Unreadable(description: "\(error)")
        }
    }

    /// Every file the judgement of these hosts reads and a change to which changes a verdict:
    /// their known_hosts files (their own UserKnownHostsFile too), the pin file, RevokedHostKeys files.
    public func watchedPaths(for hosts: [InventoryHost]) -> [String] {
        KnownHostsSets.allPaths(userFiles: userKnownHosts, globalFiles: globalKnownHosts, hosts: hosts) + (pinFile.map { [$0] } ?? [])
            + Set(hosts.flatMap { $0.sshOptions.revokedHostKeys ?? [] }).sorted()
    }
}

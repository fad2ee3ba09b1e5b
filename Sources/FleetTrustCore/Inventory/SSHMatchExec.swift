/// `Match exec COMMAND` for one host, as OpenSSH 9.2's `match_cfg_line` evaluates it: where the
/// criterion is reached (left to right; after a criterion that failed it is skipped), its `%`
/// tokens are expanded from the values obtained so far in the pass, and the command runs through
/// the user's shell (`MatchExecRunner`); exit status 0 is a match. `ssh` runs it in every pass that
/// reaches the line, so each pass here runs it again, but a `Match` line split around an
/// `Include` is still one line, run once per pass.
///
/// Only the user's own configuration, read in this process with a runner given, gets its commands
/// run. One from an inventory (a line of an ssh_config inventory not read from the user's files, Ansible's `-o`),
/// one met while replaying, and one for a host whose name or user `ssh` would refuse on its
/// command line is never run: the block may apply, so the host is `unchecked`, naming it.
struct SSHMatchExec {
    /// The tokens `match_cfg_line` expands for `exec` (`%C %L %d %h %i %k %l %n %p %r %u` and
    /// `%%`); another one makes `ssh` stop.
    static let tokens: Set<Character> = ["%", "C", "L", "d", "h", "i", "k", "l", "n", "p", "r", "u"]

    private let runner: MatchExecRunner?
    private let ownership: SSHLineOwnership
    /// Why nothing is run for this host; nil when commands may run.
    private let never: String?
    /// This pass's answers, by line and command.
    private var answers: [String: MatchExecRunner.Outcome] = [:]

    /// What the tokens expand to, from `match_cfg_line`'s variables at the criterion.
    struct Facts {
        /// `%h`: the `HostName` obtained so far (`%h` in it expanded), else the host argument; in
        /// the final pass the canonical host name.
        var host: String
        var originalHost: String
        var port: Int
        var remoteUser: String
        var hostKeyAlias: String?
        var home: String
        var localUser: String
    }

    /// The inventory's own lines (`ownership`) are never run.
    private static let notTheUsers = "the inventory sets it, and fleettrust never runs a command an inventory names"

    init(ownership: SSHLineOwnership, options: InventoryReadOptions) {
        runner = options.matchExecRunner
        self.ownership = ownership
        if options.matchExecRunner == nil {
            never = "fleettrust runs no command here (a replay runs nothing), so this block may apply"
        } else {
            never = nil
        }
    }

    /// Why a value that goes into the command is one fleettrust refuses the host for: names
    /// from an inventory (the host argument, Ansible's `-o HostName=`) reach the shell through
    /// `%h`, `%n`, `%k` and `%r`, so each is checked as `ssh` checks a command-line value, and a
    /// host refused for one never gets here with it.
    private static func refusal(_ facts: Facts) -> String? {
        do {
            for name in [facts.originalHost, facts.host] + (facts.hostKeyAlias.map { [$0] } ?? []) { _ = try SSHHostName(name) }
            _ = try SSHUserName(facts.remoteUser)
            return nil
        } catch {
            return error.description
        }
    }

    /// A new pass: `ssh` runs every command again.
    mutating func startPass() { answers = [:] }

    /// What one criterion gave.
    enum Answer {
        /// Whether the command exited with status 0.
        case exitedZero(Bool)
        /// Why fleettrust cannot tell: the block may apply, so the host is unchecked, naming the
        /// line, where the block sets anything that matters.
        case unanswered(UnjudgedSetting)
        /// `ssh` stops on it: the host is unchecked whatever the block sets.
        case sshStops(UnjudgedSetting)
    }

    mutating func evaluate(_ template: String, at location: SourceLocation, negated: Bool, facts: Facts) -> Answer {
        let keyword = "Match \(negated ? "!" : "")exec \(template)"
        func unanswered(_ why: String) -> Answer {
            .unanswered(UnjudgedSetting(keyword: keyword, location: location, why: why))
        }
        func stops(_ why: String) -> Answer {
            .sshStops(UnjudgedSetting(keyword: keyword, location: location, why: "ssh stops: " + why))
        }
        guard ownership.origin(of: location) == .userConfiguration else { return unanswered(Self.notTheUsers) }
        guard let runner, never == nil else { return unanswered(never ?? "") }
        if let problem = Self.refusal(facts) { return unanswered("not run: \(problem)") }
        let values = SSHConfigTokens.clientValues(remoteHost: facts.host, port: facts.port, remoteUser: facts.remoteUser,
                                                  originalHost: facts.originalHost, keyAlias: facts.hostKeyAlias ?? facts.host,
                                                  home: facts.home, localUser: facts.localUser)
        let command = SSHConfigTokens.expand(template, values)
        let key = "\(location) \(command)"
        let outcome = answers[key] ?? runner.run(command)
        answers[key] = outcome
        switch outcome {
        case .exited(let status): return .exitedZero(status == 0)
        case .sshStops(let why): return stops(why)
        case .unanswered(let why): return unanswered(why)
        }
    }
}

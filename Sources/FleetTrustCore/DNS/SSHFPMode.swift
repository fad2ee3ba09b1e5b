/// `VerifyHostKeyDNS` as `ssh` reads it: off, `yes` (a validated matching record accepts the key)
/// or `ask` (records are read and reported, a match never accepts on its own).
public enum SSHFPMode: String, Hashable, Sendable, Codable {
    case no, yes, ask

    /// `readconf.c`'s `multistate_yesnoask`.
    init?(keyword: String) {
        switch keyword.lowercased() {
        case "yes", "true": self = .yes
        case "no", "false": self = .no
        case "ask": self = .ask
        default: return nil
        }
    }
}

import Foundation

/// Whether new known_hosts names are written hashed: yes, no, or what `HashKnownHosts` says in
/// the user's ssh configuration (asked of `ssh -G`).
public enum HashChoice: String, CaseIterable, Sendable {
    case yes, no, auto

    public func hashes() async -> Bool {
        switch self {
        case .yes: return true
        case .no: return false
        case .auto: return await SSHClientConfiguration.hashKnownHosts()
        }
    }
}

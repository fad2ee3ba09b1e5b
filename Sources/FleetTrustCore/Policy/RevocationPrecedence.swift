/// What every policy's answer is overruled by, applied once, after the policy has spoken.
///
/// A revocation (a known_hosts `@revoked` line, or the `RevokedHostKeys` file) makes `ssh` refuse
/// the key whatever else it knows, so no policy may turn it into anything quieter: not `pin-only`
/// trusting a pinned key, not `ca` trusting a certificate, not a library user's custom policy.
/// Likewise a `RevokedHostKeys` file `ssh` cannot use fails every connection. Only `unchecked`
/// stands (the `off` policy: nothing was checked, and it is never trusted). Keeping this here,
/// rather than in each policy, is what makes it hold for every policy by construction.
extension PolicyDecision {
    public func overruled(byRevocationsIn keys: [JudgedKey], unusableList: RevocationListError?) -> PolicyDecision {
        guard status != .unchecked else { return self }
        if let index = keys.firstIndex(where: { $0.says(.revoked) }) {
            return PolicyDecision(status: .revoked, reason: .keyRevoked(key: index))
        }
        if let unusableList, status.alarmLevel < 2 {
            return PolicyDecision(status: .error, reason: .probeFailed,
                                  failure: .trustSource(unusableList.description))
        }
        return self
    }
}

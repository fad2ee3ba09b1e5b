import FleetTrustCore

/// The trust, replace, pin and forget flows: each opens a confirmation, and only the confirming
/// key turns it into a `.write` effect.
extension DashboardUpdate {
    static func refuseIfReadOnly(_ state: inout DashboardState) -> Bool {
        guard state.settings.readOnly else { return false }
        state.notice = Notice("Read-only mode (--read-only): nothing is written.", isError: true)
        return true
    }

    /// The marked hosts, or the selected one when none is marked. In the detail view every action
    /// is about the host on screen, whatever is marked elsewhere.
    static func targets(_ state: DashboardState) -> (indices: [Int], marked: Int) {
        let marked = state.mode == .detail ? [] : state.markedIndices
        if !marked.isEmpty { return (marked, marked.count) }
        return (state.selectedIndex.map { [$0] } ?? [], 0)
    }

    /// What a decision about host `index` will do, from its judgement: the names `ssh` looks up,
    /// the keys the judgement offers for saving, the file, and the lines it was shown.
    static func item(_ index: Int, _ state: DashboardState, keys: [HostKey], previous: [RecordedLine] = [],
                     file: String? = nil) -> DecisionItem? {
        let row = state.rows[index]
        guard let judged = row.judged else { return nil }
        return DecisionItem(index: index, host: row.host, names: judged.saveNames, keys: keys, previous: previous,
                            file: file ?? judged.saveFile, seen: judged.recorded, shownPins: judged.pin.pinnedText)
    }

    /// Why a host cannot be trusted with `y` right now, or nil when it can.
    static func trustRefusal(_ row: HostRow) -> String? {
        let name = row.host.name
        guard let judged = row.judged else { return "\(name) has not answered yet" }
        switch judged.saving {
        case .save: return nil
        case .replace: return "\(name) has a changed key (select it alone to replace it)"
        case .refused(let refusal):
            switch refusal {
            case .alreadyTrusted: return "\(name) is already trusted"
            case .notProbedYet: return "\(name) has not answered yet"
            case .noUsableKey, .nothingToSave: return "\(name) presented no key ssh could use"
            case .notPinned: return "\(name) needs a pin under its \(judged.policy) policy: pin its key with p"
            case .unchecked: return "\(name) has the policy off: nothing is checked and nothing is saved (UNSAFE)"
            case .revoked, .pinMismatch, .invalidCertificate, .splitView, .unverified:
                return "\(name) cannot be trusted here: " + JudgementWords.reason(judged)
            case .notSSH:
                return tlsTrustRefusal(judged)
            }
        }
    }

    /// Why `t` does not pin a TLS endpoint (it pins only an `untrusted` or `unpinned` one, see
    /// `startTrust`): by its status, so an endpoint in alarm is not sent to `p`, which refuses it too.
    static func tlsTrustRefusal(_ judged: JudgedHost) -> String {
        let name = judged.host.name
        switch judged.status {
        case .trusted: return "\(name) is already trusted"
        case .pending: return "\(name) has not answered yet"
        case .unchecked: return "\(name) has the policy off: nothing is checked and nothing is saved (UNSAFE)"
        default: return "\(name) cannot be trusted here: " + JudgementWords.reason(judged)
        }
    }

    /// A known_hosts file named on the command line that did not exist at start is most often a
    /// typo: trusting into it would make a new file that a later scan of it calls trusted. As
    /// `sync` wants `--create`, so does the dashboard.
    static func refuseIfMissing(_ file: String, _ state: inout DashboardState) -> Bool {
        guard state.settings.missingKnownHostsFiles.contains(file), !state.settings.createsMissingKnownHosts else { return false }
        state.notice = Notice("\(file) did not exist when the dashboard opened (a typo?); nothing was saved. "
                              + "Start with --create to create it.", isError: true)
        return true
    }

    static func startTrust(in state: inout DashboardState) {
        if refuseIfReadOnly(&state) { return }
        let (indices, marked) = targets(state)
        guard !indices.isEmpty else { return }
        let rows = state.rows
        if let file = indices.lazy.compactMap({ rows[$0].judged?.saveFile }).first, refuseIfMissing(file, &state) { return }
        if indices.count == 1, let judged = state.rows[indices[0]].judged, let replacement = judged.replacement {
            // As for a new host: only the key ssh meets (`FirstUseKeys`).
            let keys = FirstUseKeys(judged, offered: replacement.keys).saved
            if keys.isEmpty {
                state.notice = Notice("Nothing to replace: ssh would meet none of the keys \(judged.host.name) proved.", isError: true)
            } else if let item = item(indices[0], state, keys: keys, previous: replacement.superseded) {
                state.mode = .confirm(.replace(item: item, typed: ""))
            }
            return
        }
        if indices.count == 1, let judged = state.rows[indices[0]].judged,
           judged.saving == .refused(.notPinned) || (judged.tls != nil && [.untrusted, .unpinned].contains(judged.status)) {
            // Under a policy that wants a pin, trusting a host means pinning its key.
            startPin(in: &state)
            return
        }
        var items: [DecisionItem] = []
        var skipped: [String] = []
        for index in indices {
            if let refusal = trustRefusal(state.rows[index]) {
                skipped.append(refusal)
            } else if let judged = state.rows[index].judged, case .save(let offered) = judged.saving {
                // Trust on first use saves what ssh would (`FirstUseKeys`), and shows what it leaves out.
                let choice = FirstUseKeys(judged, offered: offered)
                if choice.saved.isEmpty {
                    skipped.append("\(judged.host.name): ssh would meet none of the keys it proved")
                } else if var item = item(index, state, keys: choice.saved) {
                    item.withheld = choice.withheld
                    items.append(item)
                }
            }
        }
        guard !items.isEmpty else {
            state.notice = Notice("Nothing to trust: " + skipped.joined(separator: "; ") + ".", isError: true)
            state.notice?.untilAnswered = Set(indices.filter { state.rows[$0].judged == nil })
            return
        }
        state.mode = .confirm(.trust(items: items, skipped: skipped, marked: marked))
    }

    static func startPin(in state: inout DashboardState) {
        if refuseIfReadOnly(&state) { return }
        guard let pinFile = state.settings.pinFile else {
            state.notice = Notice("No pin file: start with --pins FILE to pin keys.", isError: true)
            return
        }
        var items: [DecisionItem] = []
        var refusals: [String] = []
        let (indices, marked) = targets(state)
        for index in indices {
            let row = state.rows[index]
            if let judged = row.judged, judged.tls != nil {
                switch tlsPinItem(index, state, judged, file: pinFile) {
                case .success(let item): items.append(item)
                case .failure(let refusal): refusals.append(refusal.text)
                }
                continue
            }
            // Only keys something vouches for besides this probe: the key ssh meets, keys known_hosts
            // trusts, keys already pinned. A pin from the other connections would prove a mix (`FirstUseKeys`).
            var withheld: [HostKey] = []
            let usable = row.judged?.keys.compactMap { key -> HostKey? in
                guard let plain = key.key, !plain.isCertificate, key.unusable == nil else { return nil }
                guard key.isNegotiated || key.verdict == .trusted || row.judged?.pin.pinned.contains(plain.fingerprint) == true else {
                    withheld.append(plain)
                    return nil
                }
                return plain
            } ?? []
            switch row.status {
            case .trusted, .new, .unpinned:
                if !usable.isEmpty, var item = item(index, state, keys: usable, file: pinFile) {
                    item.withheld = withheld
                    items.append(item)
                } else {
                    refusals.append("\(row.host.name) presented no key ssh could use")
                }
            case .changed, .revoked, .pinMismatch, .invalidCertificate, .splitView, .unverified:
                refusals.append("\(row.host.name) is \(row.status.rawValue); resolve that before pinning")
            default:
                refusals.append("\(row.host.name) presented no key ssh could use")
            }
        }
        guard !items.isEmpty else {
            state.notice = Notice("Nothing to pin: " + refusals.joined(separator: "; ") + ".", isError: true)
            return
        }
        state.mode = .confirm(.pin(items: items, marked: marked))
    }

    struct Refusal: Error { var text: String }

    /// Pinning a TLS endpoint pins its leaf's public key (`pin-sha256:`) for `[name]:port`: what
    /// makes a `pin-only` endpoint trusted, and keeps matching when the certificate is reissued
    /// for the same key. Refused while the endpoint is in alarm (pin or name mismatch).
    static func tlsPinItem(_ index: Int, _ state: DashboardState, _ judged: JudgedHost, file: String) -> Result<DecisionItem, Refusal> {
        let name = judged.host.name
        guard let leaf = judged.tls?.leaf else { return .failure(Refusal(text: "\(name) presented no certificate")) }
        guard ![.pinMismatch, .nameMismatch].contains(judged.status) else {
            return .failure(Refusal(text: "\(name) is \(judged.status.rawValue); resolve that before pinning"))
        }
        let pattern = "[\(judged.host.tls?.serverName ?? judged.host.address)]:\(judged.host.port)"
        var item = DecisionItem(index: index, host: judged.host, names: [pattern], keys: [], previous: [], file: file,
                                shownPins: judged.pin.pinnedText)
        item.spkiPins = [leaf.spkiSHA256]
        item.certificateFingerprint = leaf.sha256
        return .success(item)
    }

    static func startForget(in state: inout DashboardState) {
        if refuseIfReadOnly(&state) { return }
        guard let index = state.selectedIndex else { return }
        let row = state.rows[index]
        let recorded = row.judged?.recorded ?? []
        let removable = recorded.filter { $0.keptByForget == nil }
        let alarm = row.status.alarmLevel == 2 ? row.status : nil
        // In alarm, the item carries what the host presents now, for the audit log.
        let presented = alarm == nil ? [] : (row.judged?.keys.compactMap(\.key) ?? [])
        guard let first = removable.first,
              var item = item(index, state, keys: presented, previous: removable, file: first.location.file) else {
            let kept = recorded.map { "\($0.location) is \($0.keptByForget ?? "")" }
            state.notice = Notice(recorded.isEmpty ? "\(row.host.name) has no known_hosts entries to forget."
                                  : "Nothing to forget for \(row.host.name): " + kept.joined(separator: "; ") + ".",
                                  isError: !recorded.isEmpty)
            return
        }
        item.kept = recorded.filter { $0.keptByForget != nil }
        state.mode = .confirm(.forget(item: item, alarm: alarm, typed: ""))
    }

    static func handleConfirmation(_ confirmation: Confirmation, _ key: Key, in state: inout DashboardState) -> [DashboardEffect] {
        if let name = confirmation.requiredName {
            let typed = confirmation.typed
            switch key {
            case .character(let c) where !c.unicodeScalars.contains(where: Sanitizer.isControl):
                state.mode = .confirm(confirmation.typing(String((typed + String(c)).suffix(300))))
                return []
            case .backspace:
                state.mode = .confirm(confirmation.typing(String(typed.dropLast())))
                return []
            case .enter where typed == name:
                switch confirmation {
                case .forget(let item, let alarm, _): return confirm(Decision(kind: .forget, items: [item], alarm: alarm), in: &state)
                case .replace(let item, _): return confirm(Decision(kind: .replace, items: [item]), in: &state)
                default: return []
                }
            case .enter:
                state.mode = .list
                let undone: String
                if case .forget = confirmation { undone = "nothing was removed" } else { undone = "nothing was saved" }
                state.notice = Notice("The name did not match '\(name)'; \(undone).", isError: true)
                return []
            default:
                state.mode = .list
                state.notice = Notice("Cancelled; nothing was saved.")
                return []
            }
        }
        guard key == .character("y") else {
            state.mode = .list
            state.notice = Notice("Cancelled; nothing was saved.")
            return []
        }
        switch confirmation {
        case .trust(let items, _, _): return confirm(Decision(kind: .trust, items: items), in: &state)
        case .pin(let items, _): return confirm(Decision(kind: .pin, items: items), in: &state)
        case .forget(let item, _, _): return confirm(Decision(kind: .forget, items: [item]), in: &state)
        case .replace: return []
        }
    }

    static func confirm(_ decision: Decision, in state: inout DashboardState) -> [DashboardEffect] {
        state.mode = .list
        state.pendingWrites += 1
        for item in decision.items { state.rows[item.index].marked = false }
        return [.write(decision)]
    }
}

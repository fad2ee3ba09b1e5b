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
        var item = DecisionItem(index: index, host: row.host, names: judged.saveNames, keys: keys, previous: previous,
                                file: file ?? judged.saveFile, seen: judged.recorded, shownPins: judged.pin.pinnedText)
        item.recordedFrom = state.settings.recording.map { recording in
            "the recording \(recording)" + (judged.probe.scanner.map { ", scanned from \($0)" } ?? "")
        }
        return item
    }

    /// Replay follows `scan --replay --format known-hosts`: a new host's keys no pin proves come
    /// from a recording, not from this machine, and are saved only with `--trust-on-first-use`.
    static func recordingRefusal(_ row: HostRow, _ state: DashboardState) -> String? {
        guard let recording = state.settings.recording, !state.settings.trustsRecordingOnFirstUse,
              let judged = row.judged, judged.status == .new, judged.pin.verdict != .matched else { return nil }
        return "\(row.host.name) is new: start the dashboard with --trust-on-first-use to save keys that come from "
            + "the recording \(recording), not from this machine, or pin them"
    }

    /// Why a host cannot be trusted with `y` right now, or nil when it can (`HostActions.trust`).
    static func trustRefusal(_ row: HostRow) -> String? {
        let name = row.host.name
        guard let judged = row.judged else { return "\(name) has not answered yet" }
        switch judged.actions.trust {
        case .save: return nil
        case .replace: return "\(name) has a changed key (select it alone to replace it)"
        case .pin: return "\(name) needs a pin under its \(judged.policy) policy: pin its key with p"
        case .refused(let refusal):
            switch refusal {
            case .alreadyTrusted: return "\(name) is already trusted"
            case .notProbedYet: return "\(name) has not answered yet"
            case .noUsableKey, .nothingToSave: return "\(name) presented no key ssh could use"
            case .noKeySSHMeets: return "\(name): ssh would meet none of the keys it proved"
            case .notPinned: return "\(name) needs a pin under its \(judged.policy) policy: pin its key with p"
            case .unchecked: return "\(name) has the policy off: nothing is checked and nothing is saved (UNSAFE)"
            case .revoked, .pinMismatch, .invalidCertificate, .splitView, .unverified, .notSSH:
                return "\(name) cannot be trusted here: " + JudgementWords.reason(judged)
            }
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
        if indices.count == 1, let actions = state.rows[indices[0]].judged?.actions {
            switch actions.trust {
            case .replace(let replacement):
                if var item = item(indices[0], state, keys: replacement.keys, previous: replacement.superseded) {
                    item.withheld = actions.trustWithheld
                    state.mode = .confirm(.replace(item: item, typed: ""))
                }
                return
            case .pin:
                startPin(in: &state)
                return
            case .save, .refused: break
            }
        }
        var items: [DecisionItem] = []
        var skipped: [String] = []
        for index in indices {
            if let refusal = trustRefusal(state.rows[index]) ?? recordingRefusal(state.rows[index], state) {
                skipped.append(refusal)
            } else if let actions = state.rows[index].judged?.actions, case .save(let keys) = actions.trust,
                      var item = item(index, state, keys: keys) {
                // Trust on first use saves what ssh would (`FirstUseKeys`), and shows what it leaves out.
                item.withheld = actions.trustWithheld
                items.append(item)
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
            let name = row.host.name
            switch row.judged?.actions.pin {
            case .keys(let keys):
                if var item = item(index, state, keys: keys, file: pinFile) {
                    item.withheld = row.judged?.actions.pinWithheld ?? []
                    items.append(item)
                }
            case .leaf(let leaf, let pattern):
                var item = DecisionItem(index: index, host: row.host, names: [pattern], keys: [], previous: [], file: pinFile,
                                        shownPins: row.judged?.pin.pinnedText ?? [])
                item.spkiPins = [leaf.spkiSHA256]
                item.certificateFingerprint = leaf.sha256
                items.append(item)
            case .inAlarm(let status):
                refusals.append("\(name) is \(status.rawValue); resolve that before pinning")
            case .nothingToPin where row.judged?.tls != nil:
                refusals.append("\(name) presented no certificate")
            case .nothingToPin, nil:
                refusals.append("\(name) presented no key ssh could use")
            }
        }
        guard !items.isEmpty else {
            state.notice = Notice("Nothing to pin: " + refusals.joined(separator: "; ") + ".", isError: true)
            return
        }
        state.mode = .confirm(.pin(items: items, marked: marked))
    }

    static func startForget(in state: inout DashboardState) {
        if refuseIfReadOnly(&state) { return }
        guard let index = state.selectedIndex else { return }
        let row = state.rows[index]
        let recorded = row.judged?.recorded ?? []
        let removable = row.judged?.actions.forgettable ?? []
        let alarm = row.judged?.actions.forgetAlarm
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

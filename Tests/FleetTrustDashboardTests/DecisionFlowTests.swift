import FleetTrustCore
@testable import FleetTrustDashboard
import XCTest

final class DecisionFlowTests: XCTestCase {
    func testTrustShowsNamesFingerprintsRandomartAndFileThenYSaves() throws {
        let state = Fixtures.probed(Fixtures.state(hosts: 2), 0, .new)
        let (asking, none) = Fixtures.press(state, .character("t"))
        XCTAssertEqual(none, [])
        guard case .confirm(.trust(let items, _, _)) = asking.mode else { return XCTFail("\(asking.mode)") }
        XCTAssertEqual(items.map(\.names), [["[10.0.0.0]:2200"]])
        let text = DashboardView.view(asking).text
        XCTAssertTrue(text.contains("saved as: [10.0.0.0]:2200"), text)
        XCTAssertTrue(text.contains(Fixtures.ed25519Fingerprint))
        XCTAssertTrue(text.contains(Randomart.draw(Fixtures.ed25519)[1]))
        XCTAssertTrue(text.contains("/tmp/kh"))
        let (saved, effects) = Fixtures.press(asking, .character("y"))
        XCTAssertEqual(saved.mode, .list)
        XCTAssertEqual(effects, [.write(Decision(kind: .trust, items: items))])
        // First use saves the key ssh meets; the other proved key is shown as not saved.
        XCTAssertEqual(items[0].keys, [Fixtures.ed25519])
        XCTAssertEqual(items[0].withheld, [Fixtures.ecdsa])
        XCTAssertTrue(text.contains("left out, only a pin from their owner can vouch for them: ECDSA"), text)
        XCTAssertEqual(saved.pendingWrites, 1)
    }

    func testCertificatesAreNotWrittenAsPlainKnownHostsEntries() throws {
        let certificate = try HostKey(type: "ssh-ed25519-cert-v01@openssh.com", blob: Fixtures.certificateBlob)
        let state = Fixtures.probed(Fixtures.state(hosts: 1), 0, .new, keys: [certificate, Fixtures.ed25519])
        let effects = Fixtures.press(state, .character("t"), .character("y")).1
        guard case .write(let decision)? = effects.first else { return XCTFail("\(effects)") }
        XCTAssertEqual(decision.items[0].keys, [Fixtures.ed25519])
    }

    func testAnyOtherKeyCancelsATrust() {
        let asking = Fixtures.press(Fixtures.probed(Fixtures.state(), 0, .new), .character("t")).0
        for key in [Key.character("n"), .enter, .escape, .character("Y")] {
            let (after, effects) = Fixtures.press(asking, key)
            XCTAssertEqual(effects, [], "\(key)")
            XCTAssertEqual(after.mode, .list)
            XCTAssertEqual(after.notice?.text.value.contains("nothing was saved"), true)
        }
    }

    func testMarkedHostsAreTrustedInOneBatchAndOthersAreSkippedWithReasons() {
        var state = Fixtures.state(hosts: 4)
        state = Fixtures.probed(state, 0, .new)
        state = Fixtures.probed(state, 1, .revoked)
        state = Fixtures.probed(state, 2, .new)
        state = Fixtures.press(state, .character(" "), .character(" "), .character(" "), .character("t")).0
        guard case .confirm(.trust(let items, let skipped, _)) = state.mode else { return XCTFail("\(state.mode)") }
        XCTAssertEqual(items.map(\.index), [0, 2])
        XCTAssertEqual(skipped.count, 1)
        let text = DashboardView.view(state).text
        XCTAssertTrue(text.contains("skipped: host1 cannot be trusted here: the key ED25519 \(Fixtures.ed25519Fingerprint) is revoked"), text)
        XCTAssertTrue(text.contains("by @revoked at /tmp/kh:7"), text)
        let (after, effects) = Fixtures.press(state, .character("y"))
        XCTAssertEqual(effects.count, 1)
        XCTAssertEqual(after.markedIndices, [1])
    }

    func testAChangedKeyIsShownSideBySideWithTheOldLineAndIsNeverSavedByY() {
        let state = Fixtures.probed(Fixtures.state(hosts: 2, width: 160, height: 40), 1, .changed)
        let asking = Fixtures.press(state, .down, .character("t")).0
        guard case .confirm(.replace) = asking.mode else { return XCTFail("\(asking.mode)") }
        let screen = DashboardView.view(asking)
        let sideBySide = screen.lines.first { $0.text.contains(Fixtures.otherEd25519.sha256Fingerprint) && $0.text.contains(Fixtures.ed25519Fingerprint) }
        XCTAssertNotNil(sideBySide, screen.text)
        XCTAssertTrue(screen.text.contains("/tmp/kh:7"))
        XCTAssertEqual(screen.role(of: "HAS CHANGED"), .statusChanged)
        let (afterY, effects) = Fixtures.press(asking, .character("y"), .enter)
        XCTAssertEqual(effects, [])
        XCTAssertEqual(afterY.mode, .list)
        XCTAssertEqual(afterY.notice?.isError, true)
    }

    func testTypingTheHostNameReplacesAChangedKeyAndCarriesTheOldLine() {
        let state = Fixtures.probed(Fixtures.state(hosts: 2), 1, .changed)
        var asking = Fixtures.press(state, .down, .character("t")).0
        asking = Fixtures.type(asking, "host11")
        asking = Fixtures.press(asking, .backspace).0
        let (after, effects) = Fixtures.press(asking, .enter)
        guard case .write(let decision)? = effects.first else { return XCTFail("\(effects)") }
        XCTAssertEqual(decision.kind, .replace)
        XCTAssertEqual(decision.items[0].previous, [Fixtures.oldLine])
        XCTAssertEqual(decision.items[0].keys, [Fixtures.ed25519], "a replace saves the key ssh meets, as trust on first use")
        XCTAssertEqual(after.mode, .list)
    }

    func testRevokedAndPinMismatchCannotBeTrustedAndTheDashboardSaysWhy() {
        var state = Fixtures.probed(Fixtures.state(hosts: 2), 0, .revoked)
        state = Fixtures.probed(state, 1, .pinMismatch)
        let revoked = Fixtures.press(state, .character("t"))
        XCTAssertEqual(revoked.1, [])
        XCTAssertEqual(revoked.0.mode, .list)
        XCTAssertTrue(revoked.0.notice!.text.value.contains("revoked"), revoked.0.notice!.text.value)
        let mismatch = Fixtures.press(state, .down, .character("t"))
        XCTAssertTrue(mismatch.0.notice!.text.value.contains("pin"), mismatch.0.notice!.text.value)
        XCTAssertEqual(Fixtures.press(state, .character("p")).1, [])
    }

    func testReadOnlyRefusesEveryWrite() {
        var state = Fixtures.probed(Fixtures.state(hosts: 2, readOnly: true), 0, .new)
        state = Fixtures.probed(state, 1, .trusted)
        for key in ["t", "p", "x"] {
            for position in [0, 1] {
                let start = Fixtures.press(state, .character("g"), position == 1 ? .down : .up).0
                let (after, effects) = Fixtures.press(start, .character(Character(key)), .character("y"))
                XCTAssertEqual(effects, [], key)
                XCTAssertEqual(after.mode, .list)
            }
        }
        XCTAssertTrue(Fixtures.press(state, .character("t")).0.notice!.text.value.contains("Read-only"))
        XCTAssertTrue(DashboardView.view(state).text.contains("READ-ONLY"))
    }

    func testConnectIsOnlyForTrustedHosts() {
        var state = Fixtures.probed(Fixtures.state(hosts: 2), 0, .new)
        state = Fixtures.probed(state, 1, .trusted)
        let refused = Fixtures.press(state, .character("c"))
        XCTAssertEqual(refused.1, [])
        XCTAssertTrue(refused.0.notice!.text.value.contains("only for trusted"))
        XCTAssertEqual(Fixtures.press(state, .down, .character("c")).1, [.connect(1)])
    }

    func testPinAsksAndWritesThePresentedKeysToThePinFile() {
        let state = Fixtures.probed(Fixtures.state(hosts: 1), 0, .trusted)
        let asking = Fixtures.press(state, .character("p")).0
        XCTAssertTrue(DashboardView.view(asking).text.contains("Pin the presented keys of 1 host in /tmp/pins"), DashboardView.view(asking).text)
        let effects = Fixtures.press(asking, .character("y")).1
        guard case .write(let decision)? = effects.first else { return XCTFail("\(effects)") }
        XCTAssertEqual(decision.kind, .pin)
        XCTAssertEqual(decision.items[0].file, "/tmp/pins")
    }

    func testForgetShowsTheLinesToGoAndYRemovesThem() {
        let state = Fixtures.probed(Fixtures.state(hosts: 1), 0, .trusted)
        let asking = Fixtures.press(state, .character("x")).0
        let text = DashboardView.view(asking).text
        XCTAssertTrue(text.contains("/tmp/kh:7"), text)
        let recorded = RecordedLine(location: SourceLocation(file: "/tmp/kh", line: 7), fingerprint: Fixtures.ed25519Fingerprint, keyType: .ed25519,
                                    text: "[10.0.0.0]:2200 " + Fixtures.ed25519.openSSHLine)
        XCTAssertTrue(text.contains(recorded.text.value), text)
        let effects = Fixtures.press(asking, .character("y")).1
        guard case .write(let decision)? = effects.first else { return XCTFail("\(effects)") }
        XCTAssertEqual(decision.kind, .forget)
        XCTAssertEqual(decision.items[0].previous, [recorded])
    }

    func testForgettingAChangedHostTakesTypingItsNameAndIsRecordedAsSuch() {
        let state = Fixtures.probed(Fixtures.state(hosts: 1), 0, .changed)
        let asking = Fixtures.press(state, .character("x")).0
        XCTAssertTrue(DashboardView.view(asking).text.contains("IS CHANGED"), DashboardView.view(asking).text)
        let (refused, none) = Fixtures.press(asking, .character("y"), .enter)
        XCTAssertEqual(none, [])
        XCTAssertTrue(refused.notice!.text.value.contains("did not match"), refused.notice!.text.value)
        let typed = Fixtures.type(asking, state.rows[0].host.name)
        let effects = Fixtures.press(typed, .enter).1
        guard case .write(let decision)? = effects.first else { return XCTFail("\(effects)") }
        XCTAssertEqual(decision.kind, .forget)
        XCTAssertEqual(decision.alarm, .changed)
        let record = decision.auditEvents(user: "u", time: Date(), outcome: .written)[0].record
        XCTAssertEqual(record.action, "forget-changed")
        XCTAssertFalse(record.newFingerprints.isEmpty, "the keys the host presented are recorded")
    }

    func testForgetWithNothingRecordedSaysSo() {
        let state = Fixtures.probed(Fixtures.state(hosts: 1), 0, .new)
        let (after, effects) = Fixtures.press(state, .character("x"))
        XCTAssertEqual(effects, [])
        XCTAssertTrue(after.notice!.text.value.contains("no known_hosts entries"))
    }

    func testQuitAsksWhileHostsAreMarkedOrASaveIsPending() {
        let plain = Fixtures.state(hosts: 2)
        XCTAssertEqual(Fixtures.press(plain, .character("q")).1, [.quit])
        let marked = Fixtures.press(plain, .character(" "), .character("q")).0
        XCTAssertEqual(marked.mode, .quitConfirm)
        XCTAssertTrue(DashboardView.view(marked).text.contains("1 marked host not saved"))
        XCTAssertEqual(Fixtures.press(marked, .character("n")).0.mode, .list)
        XCTAssertEqual(Fixtures.press(marked, .character("y")).1, [.quit])
        var saving = plain
        saving.pendingWrites = 1
        XCTAssertEqual(Fixtures.press(saving, .character("q")).0.mode, .quitConfirm)
    }

    func testAFinishedWriteShowsItsMessageAndTheReassessedStatus() {
        var state = Fixtures.probed(Fixtures.state(hosts: 1), 0, .new)
        let done = state.discovery.done
        state = Fixtures.press(state, .character("t"), .character("y")).0
        let host = state.rows[0].host
        let trusted = Fixtures.judged(host, state.rows[0].judged!.probe, status: .trusted)
        state = DashboardUpdate.update(state, .hostsUpdated([HostUpdate(index: 0, judged: trusted, probed: false)])).0
        state = DashboardUpdate.update(state, .writeFinished(succeeded: true, message: "Trusted 1 host.")).0
        XCTAssertEqual(state.pendingWrites, 0)
        XCTAssertEqual(state.rows[0].status, .trusted)
        XCTAssertEqual(state.discovery.done, done, "a judgement after a write is not a second probe")
        XCTAssertTrue(DashboardView.view(state).text.contains("Trusted 1 host."))
    }

    func testAtEightyByTwentyFourTheChangedKeyScreenShowsBothFingerprintsInFull() {
        var state = Fixtures.state(hosts: 2, width: 80, height: 24)
        state = Fixtures.probed(state, 1, .changed)
        state = Fixtures.press(state, .down, .character("t")).0
        guard case .confirm(.replace) = state.mode else { return XCTFail("\(state.mode)") }
        let screen = DashboardView.view(state)
        XCTAssertEqual(screen.lines.count, 24)
        XCTAssertTrue(screen.lines.allSatisfy { DisplayWidth.of($0.text) <= 80 })
        let text = screen.lines.map(\.text).joined(separator: "\n")
        XCTAssertTrue(text.contains(Fixtures.otherEd25519.sha256Fingerprint), "recorded, in full: \(text)")
        XCTAssertTrue(text.contains(Fixtures.ed25519Fingerprint), "presented, in full: \(text)")
        XCTAssertTrue(text.contains("type the host name"), text)
    }

    /// Replace and pin, like trust, take only the key ssh meets from this probe (or keys already
    /// vouched for): the others came over connections of their own.
    func testReplaceAndPinTakeOnlyTheKeySSHMeetsFromThisProbe() {
        let changed = Fixtures.press(Fixtures.probed(Fixtures.state(hosts: 1), 0, .changed), .character("t")).0
        guard case .confirm(.replace(let item, _)) = changed.mode else { return XCTFail("\(changed.mode)") }
        XCTAssertEqual(item.keys, [Fixtures.ed25519])
        let pinning = Fixtures.press(Fixtures.probed(Fixtures.state(hosts: 1), 0, .new), .character("p")).0
        guard case .confirm(.pin(let items, _)) = pinning.mode else { return XCTFail("\(pinning.mode)") }
        XCTAssertEqual(items[0].keys, [Fixtures.ed25519])
        XCTAssertEqual(items[0].withheld, [Fixtures.ecdsa])
        XCTAssertTrue(DashboardView.view(pinning).text.contains("only a pin from their owner can vouch for them: ECDSA"), DashboardView.view(pinning).text)
    }
}

import Foundation
import XCTest
@testable import FleetTrustCore

/// The one write path: every kind of `TrustEdit` applied by `TrustStoreEditor`, each refused when
/// the file changed since the decision, each keeping unrelated bytes, mode and owner.
final class TrustStoreEditorTests: XCTestCase {
    private var dir: StoreTestDirectory!
    private let editor = TrustStoreEditor(hashNames: false)

    override func setUpWithError() throws { dir = try StoreTestDirectory() }
    override func tearDown() { dir.remove() }

    private func edit(_ change: TrustEdit.Change, file: String = "known_hosts") -> TrustEdit {
        TrustEdit(path: dir.file(file), change: change)
    }

    func testAddAppendsOnlyKeysNotAlreadyRecordedAndKeepsEveryOtherByte() throws {
        let original = "# mine\n\tother \(TestKeys.b.openSSHLine)   trailing\nweb \(TestKeys.a.openSSHLine)"
        try dir.write("known_hosts", original)
        try editor.apply(edit(.add(names: ["web"], keys: [TestKeys.a, TestKeys.c], expecting: [TestKeys.a.sha256Fingerprint])))
        XCTAssertEqual(dir.text("known_hosts"), original + "\nweb \(TestKeys.c.openSSHLine)\n")
    }

    func testAddHashesNamesWhenTheEditSaysSoWhateverTheEditorsDefault() throws {
        try dir.write("known_hosts", "")
        try editor.apply(TrustEdit(path: dir.file("known_hosts"), change: .add(names: ["[Web]:2222"], keys: [TestKeys.a], expecting: []),
                                   hashNames: true))
        let file = try KnownHostsFile.read(path: dir.file("known_hosts"))
        XCTAssertTrue(dir.text("known_hosts").hasPrefix("|1|"), dir.text("known_hosts"))
        XCTAssertEqual(KnownHostsWriter.recordedFingerprints(["[web]:2222"], in: file), [TestKeys.a.sha256Fingerprint])
    }

    func testReplaceDropsTheOldKeyForThatNameOnlyAndRecordsTheNewOne() throws {
        try dir.write("known_hosts", "web,db \(TestKeys.a.openSSHLine)\n")
        try editor.apply(edit(.replace(names: ["web"], removing: [TestKeys.a.sha256Fingerprint], keys: [TestKeys.b],
                                       expecting: [TestKeys.a.sha256Fingerprint])))
        XCTAssertEqual(dir.text("known_hosts"), "db \(TestKeys.a.openSSHLine)\nweb \(TestKeys.b.openSSHLine)\n")
    }

    func testForgetRemovesThePlainEntriesAndKeepsMarkedLines() throws {
        let revoked = "@revoked web \(TestKeys.c.openSSHLine)\n"
        try dir.write("known_hosts", "web \(TestKeys.a.openSSHLine)\n" + revoked + "db \(TestKeys.b.openSSHLine)\n")
        try editor.apply(edit(.forget(names: ["web"], expecting: [TestKeys.a.sha256Fingerprint])))
        XCTAssertEqual(dir.text("known_hosts"), revoked + "db \(TestKeys.b.openSSHLine)\n")
    }

    func testPinAppendsAPinLineWhenThePinsShownStillHold() throws {
        try dir.write("pins", "# team pins\ndb \(TestKeys.b.sha256Fingerprint)")
        try editor.apply(edit(.pin(names: ["web"], fingerprints: [TestKeys.a.sha256Fingerprint], expecting: [], spki: false), file: "pins"))
        XCTAssertEqual(dir.text("pins"), "# team pins\ndb \(TestKeys.b.sha256Fingerprint)\nweb \(TestKeys.a.sha256Fingerprint)\n")
    }

    func testRemoveLinesRemovesExactlyThoseLinesOfTheFileAsRead() throws {
        try dir.write("known_hosts", "web \(TestKeys.a.openSSHLine)\nweb \(TestKeys.a.openSSHLine)\n# end")
        let read = try KnownHostsFile.read(path: dir.file("known_hosts"))
        try editor.apply(.removeLines([2], of: read))
        XCTAssertEqual(dir.text("known_hosts"), "web \(TestKeys.a.openSSHLine)\n# end")
    }

    func testEveryKindIsRefusedWhenTheFileChangedSinceTheDecisionAndNothingIsWritten() throws {
        let recorded = [TestKeys.a.sha256Fingerprint]
        let cases: [(String, String, TrustEdit.Change)] = [
            ("add", "known_hosts", .add(names: ["web"], keys: [TestKeys.c], expecting: recorded)),
            ("replace", "known_hosts", .replace(names: ["web"], removing: Set(recorded), keys: [TestKeys.c], expecting: recorded)),
            ("forget", "known_hosts", .forget(names: ["web"], expecting: recorded)),
            ("pin", "pins", .pin(names: ["web"], fingerprints: [TestKeys.c.sha256Fingerprint], expecting: [], spki: false)),
        ]
        for (kind, file, change) in cases {
            // Decided on a file recording key a for web (no pin); meanwhile someone else recorded key b.
            let changed = file == "pins" ? "web \(TestKeys.b.sha256Fingerprint)\n" : "web \(TestKeys.a.openSSHLine)\nweb \(TestKeys.b.openSSHLine)\n"
            try dir.write(file, changed)
            XCTAssertThrowsError(try editor.apply(edit(change, file: file)), kind)
            XCTAssertEqual(dir.text(file), changed, "\(kind): nothing written")
        }
        try dir.write("known_hosts", "web \(TestKeys.a.openSSHLine)\n")
        let read = try KnownHostsFile.read(path: dir.file("known_hosts"))
        try dir.write("known_hosts", "edited \(TestKeys.b.openSSHLine)\nweb \(TestKeys.a.openSSHLine)\n")
        XCTAssertThrowsError(try editor.apply(.removeLines([1], of: read))) { error in
            guard case .conflict? = error as? StoreError else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(dir.text("known_hosts"), "edited \(TestKeys.b.openSSHLine)\nweb \(TestKeys.a.openSSHLine)\n")
        // An append (ssh adding a host meanwhile) is no change to the lines decided on: it is kept.
        try dir.write("known_hosts", "web \(TestKeys.a.openSSHLine)\nssh-appended \(TestKeys.b.openSSHLine)\n")
        try editor.apply(.removeLines([1], of: read))
        XCTAssertEqual(dir.text("known_hosts"), "ssh-appended \(TestKeys.b.openSSHLine)\n")
    }

    func testEveryKindKeepsTheFilesModeAndOwner() throws {
        let kinds: [(String, String, TrustEdit.Change)] = [
            ("add", "known_hosts", .add(names: ["new"], keys: [TestKeys.c], expecting: [])),
            ("replace", "known_hosts", .replace(names: ["web"], removing: [TestKeys.a.sha256Fingerprint], keys: [TestKeys.c],
                                                expecting: [TestKeys.a.sha256Fingerprint])),
            ("forget", "known_hosts", .forget(names: ["web"], expecting: [TestKeys.a.sha256Fingerprint])),
            ("pin", "pins", .pin(names: ["web"], fingerprints: [TestKeys.c.sha256Fingerprint], expecting: [], spki: false)),
        ]
        for (kind, file, change) in kinds {
            try dir.write(file, file == "pins" ? "# pins\n" : "web \(TestKeys.a.openSSHLine)\n")
            XCTAssertEqual(chmod(dir.file(file), 0o640), 0)
            XCTAssertEqual(chown(dir.file(file), 0, 4), 0, "the tests run as root; group 4 is adm")
            try editor.apply(edit(change, file: file))
            XCTAssertEqual(dir.status(file).st_mode & 0o7777, 0o640, kind)
            XCTAssertEqual(dir.status(file).st_gid, 4, kind)
        }
        try dir.write("known_hosts", "a \(TestKeys.a.openSSHLine)\nb \(TestKeys.b.openSSHLine)\n")
        XCTAssertEqual(chmod(dir.file("known_hosts"), 0o600), 0)
        try editor.apply(.removeLines([1], of: try KnownHostsFile.read(path: dir.file("known_hosts"))))
        XCTAssertEqual(dir.status("known_hosts").st_mode & 0o7777, 0o600, "removeLines")
        XCTAssertEqual(dir.entries(), ["known_hosts", "pins"], "no temporary file left")
    }
}

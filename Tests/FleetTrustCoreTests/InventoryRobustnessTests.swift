import Foundation
import XCTest
import FleetTrustTestFleet
@testable import FleetTrustCore

/// Inventories are untrusted input: hostile names, huge lines and ranges, arbitrary bytes.
final class InventoryRobustnessTests: XCTestCase {
    func testEscapeSequencesInNamesAreKeptAsDataButFlaggedAndSanitized() {
        let text = "[g]\nevil\u{1B}c\u{07}.example.com ansible_user=\"x\u{1B}[2J\"\n"
        let inventory = InventoryFixtures.read(text: text, format: .ansibleINI)
        let host = inventory.hosts[0]
        XCTAssertEqual(host.name, "evil\u{1B}c\u{07}.example.com")
        XCTAssertEqual(host.user, "x\u{1B}[2J")
        XCTAssertTrue(host.hasUnsafeText)
        XCTAssertEqual(host.displayName, "evil?c?.example.com")
        XCTAssertEqual(inventory.diagnostics.count, 1)
        XCTAssertFalse(inventory.diagnostics[0].description.contains("\u{1B}"))
        XCTAssertEqual(inventory.diagnostics[0].severity, .warning)
    }

    func testInvalidUTF8IsFlagged() {
        let bytes: [UInt8] = Array("ok.example.com\nbad".utf8) + [0xFF, 0xFE] + Array(".example.com\n".utf8)
        let inventory = Inventory.read(InventorySource(name: "bytes", bytes: bytes), format: .plain)
        XCTAssertEqual(inventory.hosts.map(\.hasUnsafeText), [false, true])
        XCTAssertEqual(inventory.diagnostics.map(\.location.line), [2])
    }

    func testHugeLineIsReportedAndSkipped() {
        let text = "a.example.com\n" + String(repeating: "x", count: 70_000) + "\nb.example.com\n"
        // ssh_config reads lines up to 1 MiB, as `ssh` reads any (InventorySSHConfigTests).
        for format in InventoryFormat.allCases where format != .ansibleYAML && format != .ansibleJSON && format != .sshConfig {
            let inventory = InventoryFixtures.read(text: text, format: format)
            let tooLong = inventory.errors.filter { $0.message.contains("over the limit") || $0.message.contains("longer than") }
            XCTAssertEqual(tooLong.map(\.location.line), [2], "\(format)")
            XCTAssertFalse(inventory.hosts.contains { $0.name.hasPrefix("xxx") }, "\(format)")
        }
    }

    func testRangeOverTheCapIsRefusedBeforeExpanding() {
        let inventory = InventoryFixtures.read(text: "[g]\nh[0:99999999999][0:9999999]\nok\n", format: .ansibleINI)
        XCTAssertEqual(inventory.hosts.map(\.name), ["ok"])
        XCTAssertTrue(inventory.errors[0].message.contains("more than 100000 hosts"), inventory.errors[0].message)
        let exactly = InventoryFixtures.read(text: "[g]\nh[1:100000]\n", format: .ansibleINI)
        XCTAssertEqual(exactly.hosts.count, 100_000)
        XCTAssertEqual(exactly.errors, [])
    }

    func testDeeplyNestedYAMLIsRefusedNotCrashed() {
        let text = "all: " + String(repeating: "[", count: 100_000)
        let inventory = InventoryFixtures.read(text: text, format: .ansibleYAML)
        XCTAssertEqual(inventory.hosts, [])
        XCTAssertTrue(inventory.errors[0].message.contains("nested"))
    }

    func testRandomBytesNeverCrashAnyReader() {
        var generator = SeededGenerator(seed: 0x5EED)
        let alphabet = Array("[]:=#;\"'\\ \t\n\r-@%*?!{}&,.0123456789abcxyzHostMatchInclude".utf8) + [0, 0x1B, 0xFF]
        for _ in 0..<400 {
            let length = Int.random(in: 0..<300, using: &generator)
            let bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
            for format in InventoryFormat.allCases {
                let inventory = Inventory.read(InventorySource(name: "random", bytes: bytes), format: format,
                                               options: InventoryFixtures.options)
                XCTAssertTrue(inventory.diagnostics.allSatisfy { !$0.description.contains("\u{1B}") })
            }
        }
    }

    /// Measures (and prints) the time to read 100,000 hosts in each format; no timing assertion.
    func testHundredThousandHostInventoriesLoad() {
        let count = 100_000
        var plain = "", ini = "[fleet]\n", yaml = "all:\n  hosts:\n", ssh = "Host *\n  User ops\n"
        for index in 0..<count {
            plain += "10.\(index >> 16).\((index >> 8) & 255).\(index & 255):2222\n"
            ini += "n\(index).example.com ansible_port=2222\n"
            yaml += "    n\(index).example.com: {ansible_port: 2222}\n"
            ssh += "Host n\(index)\n  HostName 10.\(index >> 16).\((index >> 8) & 255).\(index & 255)\n  Port 2222\n"
        }
        for (format, text) in [(InventoryFormat.plain, plain), (.ansibleINI, ini), (.ansibleYAML, yaml), (.sshConfig, ssh)] {
            let start = Date()
            let inventory = InventoryFixtures.read(text: text, format: format)
            let seconds = Date().timeIntervalSince(start)
            print("inventory-load \(format.rawValue): \(inventory.hosts.count) hosts in \(String(format: "%.2f", seconds)) s")
            XCTAssertEqual(inventory.hosts.count, count, "\(format)")
            XCTAssertEqual(inventory.errors, [], "\(format)")
            XCTAssertEqual(inventory.hosts.last?.port, 2222)
        }
    }
}

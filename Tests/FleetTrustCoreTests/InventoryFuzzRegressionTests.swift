import Foundation
import XCTest
@testable import FleetTrustCore

/// Replays hostile inputs (and every crash the `fuzz-inventory` target ever finds, saved under
/// Fixtures/Inventory/fuzz-regressions) through every reader, with the fuzz target's invariants.
final class InventoryFuzzRegressionTests: XCTestCase {
    func testSavedHostileInputsAreReadSafelyByEveryReader() throws {
        let directory = InventoryFixtures.directory.appendingPathComponent("fuzz-regressions")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        XCTAssertFalse(names.isEmpty)
        var options = InventoryFixtures.options
        options.followIncludes = false
        for name in names {
            let bytes = Array(try Data(contentsOf: directory.appendingPathComponent(name)))
            for format in [nil] + InventoryFormat.allCases.map(Optional.some) {
                let inventory = Inventory.read(InventorySource(name: name, bytes: bytes), format: format, options: options)
                for diagnostic in inventory.diagnostics {
                    XCTAssertFalse(diagnostic.message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, name)
                }
                for host in inventory.hosts {
                    XCTAssertTrue((1...65535).contains(host.port), name)
                    XCTAssertFalse(host.displayName.unicodeScalars.contains { $0.value < 0x20 }, name)
                }
            }
        }
    }

    func testHostileInputsAreRefusedWithAReason() throws {
        func errors(_ name: String, _ format: InventoryFormat) throws -> [String] {
            let source = try InventoryFixtures.source("fuzz-regressions/" + name)
            return Inventory.read(source, format: format, options: InventoryFixtures.options).errors.map(\.message)
        }
        XCTAssertTrue(try errors("deep-flow.yml", .ansibleYAML).first?.contains("nested more than 500") == true)
        XCTAssertTrue(try errors("deep-block.yml", .ansibleYAML).first?.contains("nested more than 500") == true)
        XCTAssertTrue(try errors("dash-chain.yml", .ansibleYAML).first?.contains("nested more than 500") == true)
        XCTAssertTrue(try errors("range-product.ini", .ansibleINI).first?.contains("more than 100000 hosts") == true)
        let chain = Inventory.read(try InventoryFixtures.source("fuzz-regressions/children-chain.ini"), options: InventoryFixtures.options)
        XCTAssertEqual(chain.errors, [])
        XCTAssertEqual(chain.hosts.first?.inheritedGroups.count, 3000)
    }
}

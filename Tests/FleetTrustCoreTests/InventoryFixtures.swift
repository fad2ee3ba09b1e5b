import Foundation
@testable import FleetTrustCore

/// Realistic inventory files kept under Fixtures/Inventory, read as the command layer would.
enum InventoryFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/Inventory")

    static func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    static func source(_ name: String) throws -> InventorySource {
        InventorySource(name: name, bytes: Array(try Data(contentsOf: directory.appendingPathComponent(name))))
    }

    static var options: InventoryReadOptions {
        InventoryReadOptions(homeDirectory: "/home/operator", includeDirectory: directory.path, localUser: "operator")
    }

    static func read(_ name: String, format: InventoryFormat? = nil) throws -> Inventory {
        Inventory.read(try source(name), format: format, options: options)
    }

    static func read(text: String, name: String = "inventory", format: InventoryFormat? = nil,
                     options: InventoryReadOptions = options) -> Inventory {
        Inventory.read(InventorySource(name: name, contents: text), format: format, options: options)
    }
}

extension Inventory {
    subscript(name: String) -> InventoryHost? {
        hosts.first { $0.name == name }
    }
}

import Foundation
@testable import FleetTrustCore

/// A real directory of inventory files for one test, written from a table of relative paths to
/// contents and removed afterwards.
struct InventoryTree {
    let root: String

    init(_ files: [String: String] = [:], executables: [String: String] = [:]) throws {
        root = NSTemporaryDirectory() + "ft-inventory-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for (path, text) in files { try write(path, text) }
        for (path, text) in executables { try write(path, text, executable: true) }
    }

    func path(_ relative: String) -> String { relative.isEmpty ? root : root + "/" + relative }

    func write(_ relative: String, _ text: String, executable: Bool = false) throws {
        let full = path(relative)
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: full))
        chmod(full, executable ? 0o755 : 0o644)
    }

    func directory(_ relative: String) throws {
        try FileManager.default.createDirectory(atPath: path(relative), withIntermediateDirectories: true)
    }

    /// Loads `relative` (the whole tree by default) as `--inventory` would.
    func load(_ relative: String = "", format: InventoryFormat? = nil,
              limits: InventoryScript.Limits = InventoryScript.Limits()) throws -> Inventory {
        try InventoryLoader(format: format, options: InventoryFixtures.options, scriptLimits: limits)
            .loadWaiting([path(relative)])
    }

    /// The error loading `relative` throws, or `nil` when it loads.
    func loadError(_ relative: String = "", format: InventoryFormat? = nil,
                   limits: InventoryScript.Limits = InventoryScript.Limits()) -> InventoryLoadError? {
        do {
            _ = try InventoryLoader(format: format, options: InventoryFixtures.options, scriptLimits: limits)
                .loadWaiting([path(relative)])
            return nil
        } catch {
            return error
        }
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }
}

extension Inventory {
    /// `name → (address, port, user)` for compact assertions.
    var endpoints: [String: String] {
        Dictionary(uniqueKeysWithValues: hosts.map { ($0.name, "\($0.user.map { $0 + "@" } ?? "")\($0.address):\($0.port)") })
    }
}

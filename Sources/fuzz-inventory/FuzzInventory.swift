#if canImport(Glibc)
import Glibc
#endif
import FleetTrustCore
import FuzzDriver

/// libFuzzer entry point: every inventory reader must accept any byte sequence without crashing,
/// report only sanitized text, and produce only hosts with valid ports.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzInventory(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzInventory.check(FuzzDriver.bytes(data, size))
    return 0
}

enum FuzzInventory {
    static func check(_ bytes: [UInt8]) {
        var options = InventoryReadOptions(homeDirectory: "/nonexistent", includeDirectory: "/nonexistent",
                                           localUser: "fuzz")
        options.followIncludes = false
        options.maxHostsPerRange = 1_000
        options.maxHosts = 10_000
        let source = InventorySource(name: "fuzz", bytes: bytes)
        _ = InventoryFormat.detect(String(decoding: bytes, as: UTF8.self))
        for format in [nil] + InventoryFormat.allCases.map(Optional.some) {
            let inventory = Inventory.read(source, format: format, options: options)
            for diagnostic in inventory.diagnostics {
                precondition(!diagnostic.message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F },
                             "unsanitized diagnostic")
                precondition(diagnostic.location.line >= 1, "diagnostic without a line")
            }
            for host in inventory.hosts {
                precondition((1...65535).contains(host.port), "port out of range")
                precondition(!host.displayName.unicodeScalars.contains { $0.value < 0x20 }, "unsanitized display name")
                _ = host.knownHostsName
                _ = host.additionalNames
            }
            precondition(inventory.hosts.count <= options.maxHosts, "host cap exceeded")
        }
    }
}

@main
enum FuzzInventoryMain {
    static func main() { FuzzDriver.main(callback: fuzzInventory, check: FuzzInventory.check) }
}

#if canImport(Glibc)
import Glibc
#endif
import FleetTrustCore

/// libFuzzer entry point: every inventory reader must accept any byte sequence without crashing,
/// report only sanitized text, and produce only hosts with valid ports.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzInventory(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzInventory.check(Array(UnsafeBufferPointer(start: data, count: size)))
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

#if LIBFUZZER
/// SwiftPM links every executable's entry point as `main`, so libFuzzer's own `main` cannot be
/// used; its driver is started from here instead, with the same command-line options.
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

@main
enum RunFuzzer {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(runFuzzerDriver(&argc, &argv, fuzzInventory))
    }
}
#else
/// Without libFuzzer (a normal `swift build`), replays inputs given as files, e.g. saved crashes.
@main
enum ReplayInventoryInputs {
    static func main() {
        for path in CommandLine.arguments.dropFirst() {
            guard let file = fopen(path, "rb") else { continue }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while case let count = fread(&buffer, 1, buffer.count, file), count > 0 { bytes += buffer[..<count] }
            fclose(file)
            FuzzInventory.check(bytes)
            print("ok \(path) (\(bytes.count) bytes)")
        }
    }
}
#endif

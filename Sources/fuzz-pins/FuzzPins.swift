#if canImport(Glibc)
import Glibc
#endif
import Foundation
import FleetTrustCore

/// libFuzzer entry point: the pin parser must accept any bytes without crashing, report
/// every problem with a line number and sanitized text, and judge with what it kept.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPins(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzPins.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

enum FuzzPins {
    static func lineCount(_ bytes: [UInt8]) -> Int {
        bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).count
    }

    static func check(_ bytes: [UInt8]) {
        let file = PinFile(path: "fuzz", bytes: bytes)
        let lines = lineCount(bytes)
        for error in file.errors {
            precondition((1...lines).contains(error.line), "error outside the file")
            precondition(!error.description.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F },
                         "unsanitized error")
        }
        for pin in file.pins {
            precondition((1...lines).contains(pin.line), "pin outside the file")
            precondition(!pin.fingerprints.isEmpty, "pin without fingerprints")
            for fingerprint in pin.fingerprints {
                precondition(fingerprint.text.utf8.count == 50 && fingerprint.text.hasPrefix("SHA256:"), "unnormalised")
                precondition((try? PinFingerprint.parse(fingerprint.text).get()) == fingerprint, "not idempotent")
            }
        }
        let pinned = try! PinFingerprint.parse("47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU").get()
        let edited = PinFile(path: "fuzz", bytes: PinWriter.adding([pinned], forPatterns: "fuzz-host", to: bytes, path: "fuzz"))
        precondition(edited.errors == file.errors, "the pin writer changed another line")
        precondition(edited.pins.contains { $0.patterns == "fuzz-host" && $0.fingerprints.contains(pinned) }, "pin not added")
        let names = ["host", "[127.0.0.1]:2222", String(decoding: bytes.prefix(64), as: UTF8.self)]
        for mode in PinSet.Mode.allCases {
            let judgement = PinSet(files: [file], mode: mode)
                .judge(names: names, fingerprints: file.pins.first.map { [$0.fingerprints[0].text] } ?? [], now: Date())
            precondition(judgement.verdict == .unpinned || !judgement.evidence.isEmpty, "verdict without evidence")
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
        exit(runFuzzerDriver(&argc, &argv, fuzzPins))
    }
}
#else
/// Without libFuzzer (a normal `swift build`), replays inputs given as files, e.g. saved crashes.
@main
enum ReplayPinInputs {
    static func main() {
        for path in CommandLine.arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            FuzzPins.check([UInt8](data))
            print("ok \(path) (\(data.count) bytes)")
        }
    }
}
#endif

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The entry point every `fuzz-*` target shares.
///
/// Built with `-DLIBFUZZER -sanitize=fuzzer`, it starts libFuzzer's driver: SwiftPM links every
/// executable's entry point as `main`, so libFuzzer's own `main` cannot be used. Built normally,
/// it replays the files named on the command line through the same check, to reproduce a
/// finding or a kept regression input.
public enum FuzzDriver {
    public typealias Callback = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32

    public static func main(callback: Callback, check: ([UInt8]) -> Void) -> Never {
        #if LIBFUZZER
        var argc = CommandLine.argc
        var argv = Optional(CommandLine.unsafeArgv)
        exit(LLVMFuzzerRunDriver(&argc, &argv, callback))
        #else
        for path in CommandLine.arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("cannot read \(path)\n".utf8))
                exit(1)
            }
            check([UInt8](data))
            print("ok \(path) (\(data.count) bytes)")
        }
        exit(0)
        #endif
    }

    /// The bytes libFuzzer hands to a callback.
    public static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    }
}

#if LIBFUZZER
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<Int32>,
                                 _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                                 _ callback: FuzzDriver.Callback) -> Int32
#endif

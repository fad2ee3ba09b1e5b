// swift-tools-version: 6.0
import PackageDescription

// sntrup761's AVX2 kernels (x86-64 only; chosen at run time, the portable Swift elsewhere).
// Optimized in debug builds too, as FleetTrustSSH is.
#if arch(x86_64)
let sntrup761Kernels: [Target.Dependency] = ["CSntrup761AVX2"]
let sntrup761KernelTargets: [Target] = [
    .target(name: "CSntrup761AVX2", cSettings: [.unsafeFlags(["-O2"], .when(configuration: .debug))]),
]
#else
let sntrup761Kernels: [Target.Dependency] = []
let sntrup761KernelTargets: [Target] = []
#endif

let package = Package(
    name: "fleettrust",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "fleettrust", targets: ["fleettrust"]),
        .executable(name: "testfleet", targets: ["testfleet"]),
        .executable(name: "fuzz-knownhosts", targets: ["fuzz-knownhosts"]),
        .executable(name: "fuzz-inventory", targets: ["fuzz-inventory"]),
        .executable(name: "dashboard-bench", targets: ["dashboard-bench"]),
        .executable(name: "fuzz-themes", targets: ["fuzz-themes"]),
        .executable(name: "fuzz-certificates", targets: ["fuzz-certificates"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.1"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        .systemLibrary(name: "CLibSSH", path: "Sources/CLibSSH", pkgConfig: "libssh",
                       providers: [.apt(["libssh-dev"])]),
        // No pkgConfig: ncursesw's .pc file carries -D_XOPEN_SOURCE=600, which SwiftPM drops with a
        // warning on every build; the shim defines what it needs and the modulemap links the libraries.
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        .systemLibrary(name: "CNcurses", path: "Sources/CNcurses", providers: [.apt(["libncursesw5-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "libssl",
                       providers: [.apt(["libssl-dev"])]),

        .target(name: "FleetTrustCore",
                dependencies: ["COpenSSL", .product(name: "Yams", package: "Yams"),
                               .product(name: "Crypto", package: "swift-crypto"),
                               .product(name: "Subprocess", package: "swift-subprocess"),
                               .product(name: "GRDB", package: "GRDB.swift")]),
        // Optimized in debug builds too: the probe's key exchanges (sntrup761 above all, about
        // 300 ms of CPU per exchange unoptimized against 14 ms) would otherwise starve the event
        // loop of a debug scan, and the tests' timeouts with it.
        .target(name: "FleetTrustSSH",
                dependencies: ["FleetTrustCore", "CLibSSH", "COpenSSL", "CLinux", "CResolver",
                               .product(name: "Crypto", package: "swift-crypto")] + sntrup761Kernels,
                swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        .target(name: "FleetTrustDashboard",
                dependencies: ["FleetTrustCore", "FleetTrustSSH", "CNcurses"]),
        .target(name: "FleetTrustTestFleet",
                dependencies: ["FleetTrustCore", .product(name: "Subprocess", package: "swift-subprocess")]),
        .target(name: "CBuildVersion"),
        // One SSHFP query through the libc resolver (res_nquery), kept out of the Swift-facing header.
        .target(name: "CResolver"),
        .executableTarget(name: "fleettrust",
                          dependencies: ["FleetTrustCore", "FleetTrustSSH", "FleetTrustDashboard", "CBuildVersion",
                                         .product(name: "ArgumentParser", package: "swift-argument-parser"),
                                         .product(name: "Subprocess", package: "swift-subprocess")]),
        .target(name: "FuzzDriver"),
        .executableTarget(name: "fuzz-inventory", dependencies: ["FleetTrustCore", "FuzzDriver"]),
        .executableTarget(name: "store-stress", dependencies: ["FleetTrustCore"]),
        .executableTarget(name: "testfleet",
                          dependencies: ["FleetTrustTestFleet", "FleetTrustDashboard", "FleetTrustSSH",
                                         .product(name: "ArgumentParser", package: "swift-argument-parser")]),

        .executableTarget(name: "fuzz-knownhosts", dependencies: ["FleetTrustCore", "FuzzDriver"]),
        .executableTarget(name: "dashboard-bench", dependencies: ["FleetTrustDashboard", "FleetTrustCore"]),
        .executableTarget(name: "fuzz-themes", dependencies: ["FleetTrustCore", "FleetTrustDashboard", "FuzzDriver"]),
        .executableTarget(name: "fuzz-certificates", dependencies: ["FleetTrustCore", "FuzzDriver"]),

        .testTarget(name: "FleetTrustCoreTests", dependencies: ["FleetTrustCore", "FleetTrustTestFleet",
                                                                .product(name: "GRDB", package: "GRDB.swift")],
                    exclude: ["Fixtures"]),
        .testTarget(name: "FleetTrustSSHTests", dependencies: ["FleetTrustSSH", "FleetTrustTestFleet"]),
        .testTarget(name: "FleetTrustDashboardTests", dependencies: ["FleetTrustDashboard"]),
        .testTarget(name: "EndToEndTests", dependencies: ["FleetTrustCore", "FleetTrustDashboard", "FleetTrustTestFleet", "store-stress"]),
    ] + sntrup761KernelTargets,
    swiftLanguageModes: [.v6]
)

// swift-tools-version:6.0
import PackageDescription

let strictness: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

// The pure core, the sound work and the simulator are optimized in debug builds too: the tests
// spend most of their time in them (the simulator's runs of 25 nodes, the matcher's searches),
// ten times slower unoptimized, and so do the e2e nodes. Safety checks stay (-O, not -Ounchecked).
let optimizedInDebug: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

// The test targets of a build thrown away after one run (Scripts/test with HUDDLE_CLEAN_BUILD,
// what CI runs) compile as whole modules: 156 CPU-s instead of 204 (the batches each type-check
// every declaration of the module again), on the run's longest path. Their object file per
// source file (-num-threads) is what SwiftPM links and what its test discovery indexes. A work
// tree keeps batch mode, whose incremental builds recompile only what an edit touched.
let testSettings = strictness
    + (Context.environment["HUDDLE_CLEAN_BUILD"] == nil ? [] : [.unsafeFlags(["-wmo", "-num-threads", "2"])])

let package = Package(
    name: "huddle",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "huddle", targets: ["huddle"]),
        .executable(name: "huddle-simulate", targets: ["huddle-simulate"]),
        .library(name: "HuddleCore", targets: ["HuddleCore"]),
        .library(name: "HuddleAudio", targets: ["HuddleAudio"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // Pure logic: identity, version vectors, room log, calibration, hold-back, wire codec.
        // No sockets, no files, no clock of its own.
        .target(
            name: "HuddleCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strictness + optimizedInDebug
        ),
        // Pure sound work: WAV bytes to samples, resampling, FFT, fingerprints, matching.
        // Depends on nothing; no files, no devices, no clock.
        .target(name: "HuddleAudio", swiftSettings: strictness + optimizedInDebug),
        // dns_sd.h: Avahi's compat library on Linux, the SDK's on macOS. No `pkgConfig:` on
        // purpose: avahi-compat-libdns_sd.pc adds -D_REENTRANT, which SwiftPM rejects with a
        // warning on every build; shim.h finds the header instead.
        .systemLibrary(
            name: "CDNSSD",
            providers: [.apt(["libavahi-compat-libdnssd-dev"])]
        ),
        // qrencode.h: libqrencode draws the web page's address as a QR code in the terminal.
        .systemLibrary(
            name: "CQRencode",
            providers: [.apt(["libqrencode-dev"])]
        ),
        // malloc.h (glibc): the node gives a catch-up's freed pages back (ProcessMemory).
        .systemLibrary(name: "CMalloc"),
        // The I/O shell around the core. Listening on Linux loads PulseAudio's client library when it
        // starts (PulseSimpleLibrary), so nothing here needs sound libraries to build or to run.
        .target(
            name: "HuddleNode",
            dependencies: [
                "HuddleCore",
                "HuddleAudio",
                .target(name: "CDNSSD", condition: .when(platforms: [.linux])),
                .target(name: "CMalloc", condition: .when(platforms: [.linux])),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // The phone's page: HTTP/1.1 and the WebSocket upgrade (Web/WebServer.swift).
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                "CQRencode",
            ],
            resources: [
                // The phone's page, served as it is: plain HTML, CSS and JS, no build step.
                .embedInCode("Web/Page/index.html"), .embedInCode("Web/Page/style.css"),
                .embedInCode("Web/Page/app.js"), .embedInCode("Web/Page/crypto.js"),
            ],
            swiftSettings: strictness
        ),
        .executableTarget(
            name: "huddle",
            dependencies: [
                "HuddleAudio",
                "HuddleCore",
                "HuddleNode",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictness
        ),
        // N nodes' state machines in virtual time over a simulated network (Scripts/simulate).
        .target(
            name: "HuddleSimulation",
            dependencies: ["HuddleCore", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictness + optimizedInDebug
        ),
        .executableTarget(
            name: "huddle-simulate",
            dependencies: ["HuddleSimulation", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strictness
        ),
        // The core's tests in two modules: the machine's (NodeMachine, Membership, the driver, the
        // schedules) and the rest. Whole-module compiles type-check a module in one process, and
        // the core's 2,100 #expect in one module were the longest path of the tests' build (106 s
        // alone, twice that beside the end-to-end tests); in two they compile side by side.
        // Support/ (fixtures, the in-memory LAN, samples) is one folder, linked into both.
        .testTarget(name: "HuddleCoreTests", dependencies: ["HuddleCore", "HuddleSimulation"], swiftSettings: testSettings),
        .testTarget(name: "HuddleMachineTests", dependencies: ["HuddleCore", "HuddleSimulation"], swiftSettings: testSettings),
        .testTarget(name: "HuddleAudioTests", dependencies: ["HuddleAudio"], swiftSettings: testSettings),
        .testTarget(
            name: "HuddleSimulationTests", dependencies: ["HuddleSimulation", "HuddleCore"], swiftSettings: testSettings),
        .testTarget(
            name: "HuddleNodeTests",
            dependencies: [
                "HuddleNode", "HuddleCore", "HuddleAudio", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(name: "HuddleCLITests", dependencies: ["huddle"], swiftSettings: testSettings),
    ]
)

// The libFuzzer targets (wire decoder, TCP frames, control lines), only when asked for
// (`Scripts/fuzz` and `Scripts/test` set HUDDLE_FUZZ=1): it links libFuzzer, which only
// -sanitize=fuzzer gives. It compiles the core's own sources (Fuzz/Core is a link to
// Sources/HuddleCore) into itself with coverage and AddressSanitizer, and nothing else: so it
// builds beside everything else in the one build directory, in seconds, where a build with the
// sanitizers everywhere needed a directory of its own and compiled swift-crypto a second time.
if Context.environment["HUDDLE_FUZZ"] != nil {
    package.products.append(.executable(name: "huddle-fuzz", targets: ["huddle-fuzz"]))
    package.targets.append(
        .executableTarget(
            name: "huddle-fuzz",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            path: "Fuzz",
            sources: ["Targets", "Core"],
            swiftSettings: strictness + [.unsafeFlags(["-sanitize=fuzzer,address"])],
            linkerSettings: [.unsafeFlags(["-sanitize=fuzzer,address", "-use-ld=lld"])]
        ))
}

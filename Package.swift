// swift-tools-version:6.2
import PackageDescription

let upcoming: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Inviso",
    // macOS/iOS 26: on Apple platforms swift-crypto re-exports CryptoKit, whose ML-KEM-1024
    // (the base of our Kyber1024 for PQXDH) first shipped in the 26 releases.
    platforms: [.macOS(.v26), .iOS(.v26)],
    products: [
        .library(name: "InvisoTime", targets: ["InvisoTime"]),
        .library(name: "InvisoCrypto", targets: ["InvisoCrypto"]),
        .library(name: "InvisoNoise", targets: ["InvisoNoise"]),
        .library(name: "InvisoSignal", targets: ["InvisoSignal"]),
        .library(name: "InvisoWire", targets: ["InvisoWire"]),
        .library(name: "InvisoMesh", targets: ["InvisoMesh"]),
        .library(name: "InvisoMeshUDP", targets: ["InvisoMeshUDP"]),
        .library(name: "InvisoKit", targets: ["InvisoKit"]),
        .library(name: "InvisoServer", targets: ["InvisoServer"]),
        .library(name: "InvisoStore", targets: ["InvisoStore"]),
        .library(name: "InvisoOffline", targets: ["InvisoOffline"]),
        .library(name: "InvisoNearby", targets: ["InvisoNearby"]),
        .executable(name: "inviso", targets: ["inviso"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.36.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        .target(
            name: "InvisoTime",
            swiftSettings: upcoming
        ),
        .target(
            name: "InvisoCrypto",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: upcoming
        ),
        .target(
            name: "InvisoNoise",
            dependencies: ["InvisoCrypto", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: upcoming
        ),
        .target(
            name: "InvisoSignal",
            dependencies: [
                "InvisoCrypto",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: upcoming
        ),
        .target(
            name: "InvisoWire",
            swiftSettings: upcoming
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(
            name: "InvisoOffline",
            dependencies: [
                "InvisoCrypto", "InvisoWire", "InvisoSignal", "InvisoStore", "CZlib",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: upcoming
        ),
        // dns_sd.h: Apple's (libSystem) or avahi's compatibility library on Linux. No
        // pkgConfig: avahi's .pc adds -D_REENTRANT, a flag SwiftPM refuses from a
        // dependency's pkg-config; the header is at /usr/include/dns_sd.h on Debian.
        .systemLibrary(
            name: "CDNSSD",
            providers: [.apt(["libavahi-compat-libdnssd-dev"])]
        ),
        .target(
            name: "InvisoNearby",
            dependencies: [
                "InvisoCrypto", "InvisoNoise", "InvisoSignal", "InvisoKit", "InvisoStore", "InvisoTime", "CDNSSD",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: upcoming,
            linkerSettings: [.linkedLibrary("dns_sd", .when(platforms: [.linux]))]
        ),
        .target(
            name: "InvisoMesh",
            dependencies: ["InvisoCrypto", "InvisoNoise", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: upcoming
        ),
        .target(
            name: "InvisoMeshUDP",
            dependencies: [
                "InvisoMesh", "InvisoCrypto", "InvisoTime",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: upcoming
        ),
        .target(
            name: "InvisoMeshSimulation",
            dependencies: ["InvisoMesh", "InvisoCrypto"],
            swiftSettings: upcoming
        ),
        .target(
            name: "InvisoKit",
            dependencies: [
                "InvisoCrypto", "InvisoNoise", "InvisoSignal", "InvisoWire", "InvisoStore", "InvisoTime",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: upcoming
        ),
        .target(
            name: "InvisoServer",
            dependencies: [
                "InvisoWire",
                "InvisoCrypto",
                "InvisoTime",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcoming
        ),
        .target(
            name: "InvisoStore",
            dependencies: [
                "InvisoCrypto",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: upcoming
        ),
        .target(
            name: "InvisoTesting",
            dependencies: [
                "InvisoCrypto", "InvisoNoise", "InvisoTime", "InvisoKit", "InvisoWire",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "inviso",
            dependencies: [
                "InvisoCrypto",
                "InvisoNoise",
                "InvisoSignal",
                "InvisoServer",
                "InvisoMesh",
                "InvisoMeshUDP",
                "InvisoMeshSimulation",
                "InvisoTime",
                "InvisoKit",
                "InvisoStore",
                "InvisoOffline",
                "InvisoNearby",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            ],
            swiftSettings: upcoming
        ),
        .target(
            name: "InvisoFuzzSupport",
            path: "Fuzz/InvisoFuzzSupport",
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "InvisoNoiseFuzz",
            dependencies: ["InvisoNoise", "InvisoCrypto", "InvisoFuzzSupport", .product(name: "Crypto", package: "swift-crypto")],
            path: "Fuzz/InvisoNoiseFuzz",
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "InvisoMeshFuzz",
            dependencies: ["InvisoMesh", "InvisoFuzzSupport"],
            path: "Fuzz/InvisoMeshFuzz",
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "InvisoServerFuzz",
            dependencies: [
                "InvisoServer", "InvisoWire", "InvisoFuzzSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            path: "Fuzz/InvisoServerFuzz",
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "InvisoKitFuzz",
            dependencies: [
                "InvisoKit", "InvisoWire", "InvisoCrypto", "InvisoNoise", "InvisoStore", "InvisoTime", "InvisoTesting",
                "InvisoFuzzSupport", .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Fuzz/InvisoKitFuzz",
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "InvisoOfflineFuzz",
            dependencies: ["InvisoOffline", "InvisoSignal", "InvisoCrypto", "InvisoTesting", "InvisoFuzzSupport"],
            path: "Fuzz/InvisoOfflineFuzz",
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "InvisoNearbyFuzz",
            dependencies: ["InvisoNearby", "InvisoKit", "InvisoNoise", "InvisoCrypto", "InvisoFuzzSupport"],
            path: "Fuzz/InvisoNearbyFuzz",
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "InvisoSignalFuzz",
            dependencies: ["InvisoSignal", "InvisoCrypto", "InvisoTesting", "InvisoFuzzSupport"],
            path: "Fuzz/InvisoSignalFuzz",
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "InvisoCryptoTests",
            dependencies: ["InvisoCrypto", "InvisoTesting", .product(name: "Crypto", package: "swift-crypto")],
            resources: [.copy("Resources")],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "InvisoNoiseTests",
            dependencies: ["InvisoNoise", "InvisoCrypto", "InvisoTesting", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "InvisoSignalTests",
            dependencies: [
                "InvisoSignal", "InvisoCrypto", "InvisoTesting",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "InvisoKitTests",
            dependencies: [
                "InvisoKit", "InvisoCrypto", "InvisoNoise", "InvisoSignal", "InvisoStore", "InvisoTesting",
                "InvisoServer", "InvisoWire", "InvisoTime",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "InvisoMeshTests",
            dependencies: [
                "InvisoMesh", "InvisoMeshUDP", "InvisoMeshSimulation", "InvisoTesting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "InvisoWebTests",
            dependencies: [
                "InvisoKit", "InvisoTesting",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "InvisoWireTests",
            dependencies: ["InvisoWire"],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "InvisoOfflineTests",
            dependencies: ["InvisoOffline", "InvisoCrypto", "InvisoSignal", "InvisoStore", "InvisoTesting"],
            resources: [.copy("Resources")],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "InvisoNearbyTests",
            dependencies: [
                "InvisoNearby", "InvisoKit", "InvisoCrypto", "InvisoNoise", "InvisoSignal", "InvisoTesting",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "InvisoServerTests",
            dependencies: [
                "InvisoServer", "InvisoWire", "InvisoTesting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "InvisoStoreTests",
            dependencies: [
                "InvisoStore", "InvisoCrypto",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "invisoTests",
            dependencies: ["inviso", "InvisoKit", "InvisoStore", "InvisoCrypto", "InvisoTesting"],
            resources: [.copy("Resources")],
            swiftSettings: upcoming
        ),
    ],
    swiftLanguageModes: [.v6]
)

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
        .library(name: "InvisoCrypto", targets: ["InvisoCrypto"]),
        .library(name: "InvisoNoise", targets: ["InvisoNoise"]),
        .library(name: "InvisoSignal", targets: ["InvisoSignal"]),
        .executable(name: "inviso", targets: ["inviso"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
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
            name: "InvisoTesting",
            dependencies: ["InvisoCrypto", "InvisoNoise"],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "inviso",
            dependencies: [
                "InvisoCrypto",
                "InvisoNoise",
                "InvisoSignal",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "InvisoNoiseFuzz",
            dependencies: ["InvisoNoise", "InvisoCrypto", .product(name: "Crypto", package: "swift-crypto")],
            path: "Fuzz/InvisoNoiseFuzz",
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "InvisoSignalFuzz",
            dependencies: ["InvisoSignal", "InvisoCrypto", "InvisoTesting"],
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
            name: "invisoTests",
            swiftSettings: upcoming
        ),
    ],
    swiftLanguageModes: [.v6]
)

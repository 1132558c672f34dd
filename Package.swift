// swift-tools-version:6.1
import PackageDescription

let upcoming: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Inviso",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "InvisoCrypto", targets: ["InvisoCrypto"]),
        .library(name: "InvisoNoise", targets: ["InvisoNoise"]),
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
            name: "InvisoTesting",
            dependencies: ["InvisoCrypto", "InvisoNoise"],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "inviso",
            dependencies: [
                "InvisoCrypto",
                "InvisoNoise",
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
            name: "invisoTests",
            swiftSettings: upcoming
        ),
    ],
    swiftLanguageModes: [.v6]
)

// swift-tools-version:6.1
import PackageDescription

// Twofold — one package, small modules. Sections: shared (server and client, TwofoldDevice
// among them), server, tools, tests.
//
// The `Server` trait, on by default, brings the server's and the tools' packages (Vapor, Fluent,
// the database drivers, Prometheus, JWTKit, SwiftNIO, ArgumentParser). An app adds the SDK with
// `traits: []` and resolves only swift-crypto, swift-asn1 and swift-certificates
// (docs/sdk.md, "Add the package"; scripts/sdk_check measures it).
let server: Set<String> = ["Server"]
let package = Package(
    name: "twofold",
    defaultLocalization: "en",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "TwofoldCore", targets: ["TwofoldCore"]),
        .library(name: "TwofoldAPI", targets: ["TwofoldAPI"]),
        .library(name: "WebAuthn", targets: ["WebAuthn"]),
        .library(name: "TwofoldClient", targets: ["TwofoldClient"]),
        .library(name: "TwofoldDevice", targets: ["TwofoldDevice"]),
        .library(name: "TwofoldScenarios", targets: ["TwofoldScenarios"]),
        .library(name: "TwofoldScreens", targets: ["TwofoldScreens"]),
        .library(name: "TwofoldTestingScreens", targets: ["TwofoldTestingScreens"]),
        .library(name: "TwofoldApple", targets: ["TwofoldApple"]),
        .library(name: "TwofoldAppleUI", targets: ["TwofoldAppleUI"]),
        .library(name: "TwofoldAppleTestingUI", targets: ["TwofoldAppleTestingUI"]),
        .executable(name: "twofold-server", targets: ["twofold-server"]),
        .executable(name: "twofold", targets: ["twofold"]),
    ],
    traits: [
        .default(enabledTraits: ["Server"]),
        .trait(
            name: "Server",
            description: "The server, the command-line tool and the benchmarks, with their packages. Off for an app."
        ),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
        .package(url: "https://github.com/vapor/routing-kit.git", from: "4.9.3"),
        .package(url: "https://github.com/vapor/fluent.git", from: "4.13.0"),
        .package(url: "https://github.com/vapor/fluent-sqlite-driver.git", from: "4.9.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver.git", from: "2.14.0"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/async-kit.git", from: "1.22.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
    ],
    targets: [
        // MARK: Shared — pure Swift, usable by the server and the SDK alike.
        .target(
            name: "TwofoldCore",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(name: "TwofoldAPI"),
        // The client side: Foundation (FoundationNetworking on Linux) and TwofoldCore (codes,
        // otpauth URIs, the PIN container; swift-crypto, CryptoKit underneath on Apple
        // platforms), never the server.
        .target(
            name: "TwofoldClient", dependencies: ["TwofoldAPI", "TwofoldCore"],
            resources: [.copy("PrivacyInfo.xcprivacy"), .process("Localizable.xcstrings")]
        ),
        // Our own WebAuthn relying party: CBOR, COSE keys, authenticator data, attestation
        // statements and the two ceremonies. No Vapor: the server, the CLI and tests call it.
        .target(
            name: "WebAuthn",
            dependencies: [
                "TwofoldCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),

        // A device in software: P-256 device keys signing as the Secure Enclave does, and a
        // virtual passkey authenticator. For the tests, the CLI and the SDK's virtual phone.
        .target(
            name: "TwofoldDevice",
            dependencies: [
                "TwofoldAPI", "TwofoldClient", "TwofoldCore", "WebAuthn",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),

        // Seed 004's ten scenarios, seed 001's flows and seed 000's fallback chain on the SDK
        // and the virtual phone, each step logged; the CLI, the tests and the dashboard run them.
        .target(
            name: "TwofoldScenarios",
            dependencies: [
                "TwofoldAPI", "TwofoldClient", "TwofoldCore", "TwofoldDevice",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),

        // The app's screen models (seeds 000, 002, 003 and 004's screens): platform-neutral,
        // `Observation` for the views, on the SDK's flows. The iOS app's SwiftUI views render them.
        // No test harness: a release app links this, never TwofoldDevice or TwofoldScenarios.
        .target(name: "TwofoldScreens", dependencies: ["TwofoldAPI", "TwofoldClient", "TwofoldCore"]),
        // Seed 004's testing dashboard: the scenarios on the virtual phone or this phone. The
        // testing build of the app and `twofold dashboard` render it; the release app does not.
        .target(
            name: "TwofoldTestingScreens",
            dependencies: ["TwofoldAPI", "TwofoldClient", "TwofoldDevice", "TwofoldScenarios", "TwofoldScreens"]
        ),

        // Apple-only code, every file under `#if canImport(…)` (empty on Linux, parse-checked by
        // scripts/apple_check): the SDK's protocols on the Secure Enclave, the Keychain,
        // LocalAuthentication and AuthenticationServices; then the SwiftUI views on the screen
        // models. The app project (App/project.yml) links both.
        .target(
            name: "TwofoldApple", dependencies: ["TwofoldAPI", "TwofoldClient", "TwofoldCore"],
            resources: [.copy("PrivacyInfo.xcprivacy")]
        ),
        .target(
            name: "TwofoldAppleUI",
            dependencies: ["TwofoldAPI", "TwofoldApple", "TwofoldClient", "TwofoldCore", "TwofoldScreens"],
            resources: [.copy("PrivacyInfo.xcprivacy")]
        ),
        // The testing dashboard's view and its tab, for the app's testing build only.
        .target(
            name: "TwofoldAppleTestingUI",
            dependencies: ["TwofoldAppleUI", "TwofoldClient", "TwofoldScreens", "TwofoldTestingScreens"]
        ),

        // MARK: Server
        // Twofold's own SQLite engine: one writer thread with group commit and its window,
        // per-thread readers, prepared statements, the checkpointer. It calls the SQLite that
        // sqlite-nio carries (its VaporCSQLite module, which sqlite-nio does not publish as a
        // product): a second copy of SQLite in the process would break POSIX locks on the file.
        .target(
            name: "TwofoldSQLite",
            dependencies: [
                .product(name: "SQLiteNIO", package: "sqlite-nio", condition: .when(traits: server)),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: server)),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: server)),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: server)),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: .when(traits: server)),
            ]
        ),
        .target(
            name: "TwofoldServer",
            dependencies: [
                "TwofoldCore",
                "TwofoldAPI",
                "TwofoldSQLite",
                "WebAuthn",
                .product(name: "Vapor", package: "vapor", condition: .when(traits: server)),
                .product(name: "RoutingKit", package: "routing-kit", condition: .when(traits: server)),
                .product(name: "Fluent", package: "fluent", condition: .when(traits: server)),
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver", condition: .when(traits: server)),
                .product(
                    name: "FluentPostgresDriver", package: "fluent-postgres-driver", condition: .when(traits: server)),
                .product(name: "SQLKit", package: "sql-kit", condition: .when(traits: server)),
                .product(name: "SQLiteKit", package: "sqlite-kit", condition: .when(traits: server)),
                .product(name: "SQLiteNIO", package: "sqlite-nio", condition: .when(traits: server)),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: server)),
                .product(name: "_ConnectionPoolModule", package: "postgres-nio", condition: .when(traits: server)),
                .product(name: "AsyncKit", package: "async-kit", condition: .when(traits: server)),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: server)),
                .product(name: "JWTKit", package: "jwt-kit", condition: .when(traits: server)),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: server)),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: server)),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: server)),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: server)),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: server)),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: server)),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            resources: [.copy("Resources/openapi.yaml")]
        ),
        .executableTarget(
            name: "twofold-server",
            dependencies: [
                "TwofoldServer", .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: server)),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: server)),
            ]
        ),

        // MARK: Tools
        .executableTarget(
            name: "twofold",
            dependencies: [
                "TwofoldCore", "TwofoldAPI", "TwofoldClient", "TwofoldDevice", "TwofoldScenarios", "TwofoldScreens",
                "TwofoldTestingScreens", "WebAuthn",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: server)),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),

        .executableTarget(
            name: "twofold-bench",
            dependencies: [
                "TwofoldCore", "TwofoldAPI", "TwofoldClient", .product(name: "Crypto", package: "swift-crypto"),
            ]),

        // MARK: Tests
        .target(
            name: "TwofoldTestSupport", dependencies: ["TwofoldAPI", "TwofoldClient", "TwofoldCore"],
            path: "Tests/TwofoldTestSupport"),
        .testTarget(
            name: "TwofoldCoreTests",
            dependencies: [
                "TwofoldCore", "TwofoldTestSupport", .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(name: "TwofoldAPITests", dependencies: ["TwofoldAPI", "TwofoldTestSupport"]),
        .testTarget(
            name: "TwofoldClientTests",
            dependencies: ["TwofoldClient", "TwofoldAPI", "TwofoldCore", "TwofoldTestSupport"]
        ),
        .testTarget(
            name: "TwofoldDeviceTests",
            dependencies: [
                "TwofoldDevice", "TwofoldAPI", "TwofoldCore", "WebAuthn",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "WebAuthnTests",
            dependencies: [
                "WebAuthn", "TwofoldDevice", "TwofoldTestSupport", "TwofoldCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .testTarget(
            name: "TwofoldServerTests",
            dependencies: [
                "TwofoldServer",
                "TwofoldAPI",
                "TwofoldClient",
                "TwofoldSQLite",
                "TwofoldTestSupport",
                "WebAuthn",
                "TwofoldDevice",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "VaporTesting", package: "vapor", condition: .when(traits: server)),
                .product(
                    name: "FluentPostgresDriver", package: "fluent-postgres-driver", condition: .when(traits: server)),
                .product(name: "_ConnectionPoolModule", package: "postgres-nio", condition: .when(traits: server)),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: server)),
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "TwofoldCore", "TwofoldAPI", "TwofoldClient", "TwofoldDevice", "TwofoldScenarios", "TwofoldScreens",
                "TwofoldTestingScreens", "TwofoldTestSupport", .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

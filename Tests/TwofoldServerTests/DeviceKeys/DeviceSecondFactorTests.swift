import Crypto
import Foundation
import SQLKit
import Testing
import TwofoldAPI
import TwofoldDevice
import VaporTesting

@testable import TwofoldServer

/// Seed 001's device second factor: a PIN the server verifies and blocks after 3 wrong in a row,
/// and a biometric-protected key.
@Suite struct DeviceSecondFactorTests {
    @Test func aPINIsSetCheckedAndBlockedAfterThreeWrongInARow() async throws {
        try await withTestApp { app in
            let token = try await DeviceSecondFactorSteps.enrolled(app)
            #expect(try await DeviceSecondFactorSteps.verifyPIN(app, "4826", token: token).0 == 409, "no PIN yet")
            for bad in ["1234", "0000", "1212", "1987", "12a4", "123", String(repeating: "5", count: 17)] {
                let (status, body) = try await DeviceSecondFactorSteps.setPIN(
                    app, DevicePINChangeRequest(newPin: bad), token: token)
                #expect(status == 422 && body.contains("newPin"), "\(bad): \(body)")
            }
            #expect(
                try await DeviceSecondFactorSteps.state(app, token: token).hasPin == false,
                "a refused PIN changes nothing")
            #expect(
                try await DeviceSecondFactorSteps.setPIN(app, DevicePINChangeRequest(newPin: "4826"), token: token).0
                    == 200)
            let sql = try #require(app.db as? any SQLDatabase)
            let stored = try await sql.raw("SELECT pin_hash FROM devices").first()?.decode(
                column: "pin_hash", as: String.self)
            #expect(stored?.hasPrefix("$2") == true && stored?.contains("4826") == false, "a slow salted hash")

            #expect(try await DeviceSecondFactorSteps.verifyPIN(app, "4826", token: token).0 == 200)
            // A right PIN starts the count again: two wrong, one right, two wrong is not blocked.
            for _ in 0..<2 { #expect(try await DeviceSecondFactorSteps.verifyPIN(app, "9999", token: token).0 == 401) }
            #expect(try await DeviceSecondFactorSteps.verifyPIN(app, "4826", token: token).0 == 200)
            #expect(try await DeviceSecondFactorSteps.state(app, token: token).pinAttemptsRemaining == 3)
            try await DeviceSecondFactorSteps.blockPIN(app, token: token)
            let (status, body) = try await DeviceSecondFactorSteps.verifyPIN(app, "4826", token: token)
            #expect(status == 403 && body.contains("pin_blocked"), "the right PIN no longer works either")
            let state = try await DeviceSecondFactorSteps.state(app, token: token)
            #expect(state.pinBlocked && state.pinAttemptsRemaining == 0)
            #expect(try await AuditQueries.count(type: "device.pin_blocked", on: app) == 1)
            // Nor does changing it with the old PIN.
            let change = try await DeviceSecondFactorSteps.setPIN(
                app, DevicePINChangeRequest(newPin: "5937", pin: "4826"), token: token)
            #expect(change.0 == 403)
        }
    }

    @Test func aPINCanComeWithTheEnrolmentAndACommonOneIsRefusedThere() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            let phone = SoftwareDeviceKey()
            var request = DeviceEnrollRequest(
                username: "alice", publicKey: phone.publicKey, method: "secureEnclave", deviceId: "iphone-1",
                pin: "2580")
            let common = try await DeviceKeySteps.send(
                app, .POST, API.DeviceKeys.enroll.path(), request, token: tokens.accessToken.token)
            #expect(common.0 == 422 && common.1.contains("pin"))
            #expect(try await AuditQueries.count(table: "devices", on: app) == 0, "a refused enrolment stores nothing")
            request.pin = "4826"
            #expect(
                try await DeviceKeySteps.send(
                    app, .POST, API.DeviceKeys.enroll.path(), request, token: tokens.accessToken.token
                ).0
                    == 200)
            #expect(try await DeviceSecondFactorSteps.state(app, token: tokens.accessToken.token).hasPin)
            #expect(try await DeviceSecondFactorSteps.verifyPIN(app, "4826", token: tokens.accessToken.token).0 == 200)
        }
    }

    @Test(.tags(.database)) func racingFirstPINsSetOneAndNeverReplaceItWithoutProof() async throws {
        try await withTestApp { app in
            let token = try await DeviceSecondFactorSteps.enrolled(app)
            let pins = ["4826", "5937", "7261", "8350", "3719", "6142", "9075", "1593"]
            let results = try await withThrowingTaskGroup(of: (String, UInt).self) { group in
                for pin in pins {
                    group.addTask {
                        (
                            pin,
                            try await DeviceSecondFactorSteps.setPIN(
                                app, DevicePINChangeRequest(newPin: pin), token: token
                            ).0
                        )
                    }
                }
                return try await group.reduce(into: [(String, UInt)]()) { $0.append($1) }
            }
            let winners = results.filter { $0.1 == 200 }.map(\.0)
            #expect(winners.count == 1, "\(results)")
            // The others found a PIN already there: a conflict, or a change without proof.
            #expect(results.map(\.1).filter { ![200, 409, 422].contains($0) } == [], "\(results)")
            #expect(
                try await DeviceSecondFactorSteps.verifyPIN(app, try #require(winners.first), token: token).0 == 200)
        }
    }

    @Test(.tags(.database)) func twentyParallelWrongPINsAreEvaluatedAtMostThreeTimes() async throws {
        try await withTestApp { app in
            let token = try await DeviceSecondFactorSteps.enrolled(app)
            #expect(
                try await DeviceSecondFactorSteps.setPIN(app, DevicePINChangeRequest(newPin: "4826"), token: token).0
                    == 200)
            let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await DeviceSecondFactorSteps.verifyPIN(app, "9999", token: token).0 }
                }
                return try await group.reduce(into: [UInt]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 401 }.count == 2, "\(statuses)")
            #expect(statuses.filter { $0 == 403 }.count == 18, "\(statuses)")
            #expect(try await DeviceSecondFactorSteps.state(app, token: token).pinBlocked)
            #expect(try await AuditQueries.count(type: "device.pin_blocked", on: app) == 1)
        }
    }

    @Test func biometricsNeedThePINFirstAndABiometricUnblocksThePIN() async throws {
        try await withTestApp { app in
            let token = try await DeviceSecondFactorSteps.enrolled(app)
            let biometricKey = SoftwareDeviceKey()
            #expect(
                try await DeviceSecondFactorSteps.addBiometrics(app, biometricKey, pin: "4826", token: token).0 == 409,
                "no PIN yet")
            #expect(
                try await DeviceSecondFactorSteps.setPIN(app, DevicePINChangeRequest(newPin: "4826"), token: token).0
                    == 200)
            #expect(
                try await DeviceSecondFactorSteps.call(
                    app, .POST, API.DeviceFactors.biometricChallenge, [String: String](), token: token
                )
                .0 == 409)
            let wrong = try await DeviceSecondFactorSteps.addBiometrics(app, biometricKey, pin: "1357", token: token)
            #expect(wrong.0 == 401)
            #expect(try await DeviceSecondFactorSteps.state(app, token: token).hasBiometrics == false)
            let malformed = try await DeviceSecondFactorSteps.call(
                app, .PUT, API.DeviceFactors.addBiometrics, DeviceBiometricsAddRequest(publicKey: "AAAA", pin: "4826"),
                token: token)
            #expect(malformed.0 == 422 && malformed.1.contains("publicKey"))
            #expect(
                try await DeviceSecondFactorSteps.addBiometrics(app, biometricKey, pin: "4826", token: token).0 == 200)
            #expect(try await DeviceSecondFactorSteps.state(app, token: token).hasBiometrics)

            try await DeviceSecondFactorSteps.blockPIN(app, token: token)
            // A signature by another key is refused and unblocks nothing.
            let forged = try await DeviceSecondFactorSteps.biometricSignature(app, SoftwareDeviceKey(), token: token)
            #expect(
                try await DeviceSecondFactorSteps.call(
                    app, .POST, API.DeviceFactors.verifyBiometrics, forged, token: token
                ).0 == 401)
            #expect(try await DeviceSecondFactorSteps.state(app, token: token).pinBlocked)

            let proof = try await DeviceSecondFactorSteps.biometricSignature(app, biometricKey, token: token)
            let (status, body) = try await DeviceSecondFactorSteps.call(
                app, .POST, API.DeviceFactors.verifyBiometrics, proof, token: token)
            #expect(status == 200)
            #expect(try DeviceKeySteps.decode(DeviceFactorVerifiedResponse.self, body).pinUnblocked)
            #expect(
                try await DeviceSecondFactorSteps.call(
                    app, .POST, API.DeviceFactors.verifyBiometrics, proof, token: token
                ).0 == 409,
                "used once")
            #expect(try await DeviceSecondFactorSteps.verifyPIN(app, "4826", token: token).0 == 200)
            #expect(try await AuditQueries.count(type: "device.pin_unblocked", on: app) == 1)
        }
    }

    @Test func whenDisallowedABiometricNeitherUnblocksNorChangesThePIN() async throws {
        try await withTestApp(adjust: { $0.disallowPinChangeWithBiometric = true }) { app in
            let token = try await DeviceSecondFactorSteps.enrolled(app)
            let biometricKey = SoftwareDeviceKey()
            #expect(
                try await DeviceSecondFactorSteps.setPIN(app, DevicePINChangeRequest(newPin: "4826"), token: token).0
                    == 200)
            #expect(
                try await DeviceSecondFactorSteps.addBiometrics(app, biometricKey, pin: "4826", token: token).0 == 200)
            #expect(try await DeviceSecondFactorSteps.state(app, token: token).biometricsMayUnblockPin == false)
            try await DeviceSecondFactorSteps.blockPIN(app, token: token)

            let proof = try await DeviceSecondFactorSteps.biometricSignature(app, biometricKey, token: token)
            let (status, body) = try await DeviceSecondFactorSteps.call(
                app, .POST, API.DeviceFactors.verifyBiometrics, proof, token: token)
            #expect(status == 200)
            #expect(try DeviceKeySteps.decode(DeviceFactorVerifiedResponse.self, body).pinUnblocked == false)
            #expect(try await DeviceSecondFactorSteps.state(app, token: token).pinBlocked)
            let change = try await DeviceSecondFactorSteps.setPIN(
                app,
                DevicePINChangeRequest(
                    newPin: "5937",
                    biometric: try await DeviceSecondFactorSteps.biometricSignature(app, biometricKey, token: token)),
                token: token)
            #expect(change.0 == 403)
            #expect(try await DeviceSecondFactorSteps.verifyPIN(app, "5937", token: token).1.contains("pin_blocked"))
        }
    }

    @Test func changingThePINTakesTheOldPINOrABiometric() async throws {
        try await withTestApp { app in
            let token = try await DeviceSecondFactorSteps.enrolled(app)
            let biometricKey = SoftwareDeviceKey()
            #expect(
                try await DeviceSecondFactorSteps.setPIN(app, DevicePINChangeRequest(newPin: "4826"), token: token).0
                    == 200)
            #expect(
                try await DeviceSecondFactorSteps.addBiometrics(app, biometricKey, pin: "4826", token: token).0 == 200)

            let noProof = try await DeviceSecondFactorSteps.setPIN(
                app, DevicePINChangeRequest(newPin: "5937"), token: token)
            #expect(noProof.0 == 422)
            let wrongOld = try await DeviceSecondFactorSteps.setPIN(
                app, DevicePINChangeRequest(newPin: "5937", pin: "1357"), token: token)
            #expect(wrongOld.0 == 401)
            let common = try await DeviceSecondFactorSteps.setPIN(
                app, DevicePINChangeRequest(newPin: "1111", pin: "4826"), token: token)
            #expect(common.0 == 422 && common.1.contains("newPin"))
            #expect(
                try await DeviceSecondFactorSteps.state(app, token: token).pinAttemptsRemaining == 2,
                "a refused new PIN counts nothing")

            #expect(
                try await DeviceSecondFactorSteps.setPIN(
                    app, DevicePINChangeRequest(newPin: "5937", pin: "4826"), token: token
                ).0 == 200)
            #expect(
                try await DeviceSecondFactorSteps.verifyPIN(app, "4826", token: token).0 == 401, "the old PIN is gone")
            #expect(try await DeviceSecondFactorSteps.verifyPIN(app, "5937", token: token).0 == 200)

            let proof = try await DeviceSecondFactorSteps.biometricSignature(app, biometricKey, token: token)
            #expect(
                try await DeviceSecondFactorSteps.setPIN(
                    app, DevicePINChangeRequest(newPin: "7261", biometric: proof), token: token
                ).0
                    == 200)
            #expect(try await DeviceSecondFactorSteps.verifyPIN(app, "7261", token: token).0 == 200)
            #expect(
                try await DeviceSecondFactorSteps.setPIN(
                    app, DevicePINChangeRequest(newPin: "8350", biometric: proof), token: token
                ).0
                    == 409, "a biometric challenge proves once")
            #expect(try await AuditQueries.count(type: "device.pin_set", on: app) == 3)
        }
    }

    @Test func biometricsAreRemovedWithThePINOrABiometricAndDroppedWhenTheSetChanges() async throws {
        try await withTestApp { app in
            let token = try await DeviceSecondFactorSteps.enrolled(app)
            let biometricKey = SoftwareDeviceKey()
            #expect(
                try await DeviceSecondFactorSteps.setPIN(app, DevicePINChangeRequest(newPin: "4826"), token: token).0
                    == 200)
            #expect(
                try await DeviceSecondFactorSteps.addBiometrics(app, biometricKey, pin: "4826", token: token).0 == 200)
            #expect(
                try await DeviceSecondFactorSteps.call(
                    app, .POST, API.DeviceFactors.removeBiometrics, DeviceFactorProof(), token: token
                ).0
                    == 422)
            let proof = try await DeviceSecondFactorSteps.biometricSignature(app, biometricKey, token: token)
            #expect(
                try await DeviceSecondFactorSteps.call(
                    app, .POST, API.DeviceFactors.removeBiometrics, DeviceFactorProof(biometric: proof), token: token
                )
                .0 == 200)
            #expect(try await DeviceSecondFactorSteps.state(app, token: token).hasBiometrics == false)
            #expect(
                try await DeviceSecondFactorSteps.call(
                    app, .POST, API.DeviceFactors.removeBiometrics, DeviceFactorProof(pin: "4826"), token: token
                ).0
                    == 409, "nothing left to remove")

            // Re-added, then the device reports a changed biometric set: the key goes, the PIN stays,
            // and a challenge signed before stops working.
            #expect(
                try await DeviceSecondFactorSteps.addBiometrics(app, biometricKey, pin: "4826", token: token).0 == 200)
            let pending = try await DeviceSecondFactorSteps.biometricSignature(app, biometricKey, token: token)
            let (status, body) = try await DeviceSecondFactorSteps.call(
                app, .POST, API.DeviceFactors.biometricsInvalidated, [String: String](), token: token)
            #expect(status == 200)
            let state = try DeviceKeySteps.decode(DeviceSecondFactorResponse.self, body)
            #expect(!state.hasBiometrics && state.hasPin)
            #expect(
                try await DeviceSecondFactorSteps.call(
                    app, .POST, API.DeviceFactors.verifyBiometrics, pending, token: token
                ).0 == 409)
            #expect(try await DeviceSecondFactorSteps.verifyPIN(app, "4826", token: token).0 == 200)
            #expect(try await AuditQueries.count(type: "device.biometrics_removed", on: app) == 2)
        }
    }

    @Test func malformedPINsAndBiometricProofsAreRefusedAndCountNothing() async throws {
        try await withTestApp { app in
            let token = try await DeviceSecondFactorSteps.enrolled(app)
            let biometricKey = SoftwareDeviceKey()
            #expect(
                try await DeviceSecondFactorSteps.setPIN(app, DevicePINChangeRequest(newPin: "4826"), token: token).0
                    == 200)
            #expect(
                try await DeviceSecondFactorSteps.addBiometrics(app, biometricKey, pin: "4826", token: token).0 == 200)
            for bad in ["abcd", "", "12", "48 26", String(repeating: "7", count: 17)] {
                let (status, body) = try await DeviceSecondFactorSteps.verifyPIN(app, bad, token: token)
                #expect(status == 422 && body.contains(#""pin""#), "\(bad): \(body)")
            }
            let garbageID = BiometricSignature(challengeId: "nope", signature: "AA==")
            let (idStatus, idBody) = try await DeviceSecondFactorSteps.call(
                app, .POST, API.DeviceFactors.verifyBiometrics, garbageID, token: token)
            #expect(idStatus == 422 && idBody.contains(#""challengeId""#), "\(idBody)")
            let proof = try await DeviceSecondFactorSteps.biometricSignature(app, biometricKey, token: token)
            let garbageSignature = BiometricSignature(challengeId: proof.challengeId, signature: "%%%")
            let (signatureStatus, signatureBody) = try await DeviceSecondFactorSteps.call(
                app, .POST, API.DeviceFactors.verifyBiometrics, garbageSignature, token: token)
            #expect(signatureStatus == 422 && signatureBody.contains(#""signature""#), "\(signatureBody)")
            let nested = try await DeviceSecondFactorSteps.call(
                app, .POST, API.DeviceFactors.removeBiometrics, DeviceFactorProof(biometric: garbageSignature),
                token: token)
            #expect(nested.0 == 422 && nested.1.contains("biometric.signature"), "\(nested.1)")

            let state = try await DeviceSecondFactorSteps.state(app, token: token)
            #expect(state.pinAttemptsRemaining == 3 && state.hasBiometrics, "bad input changed nothing")
            #expect(
                try await DeviceSecondFactorSteps.call(
                    app, .POST, API.DeviceFactors.verifyBiometrics, proof, token: token
                ).0 == 200,
                "still unused")
        }
    }

    @Test func aBiometricChallengeExpiresAfterFiveMinutes() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let token = try await DeviceSecondFactorSteps.enrolled(app)
            let biometricKey = SoftwareDeviceKey()
            #expect(
                try await DeviceSecondFactorSteps.setPIN(app, DevicePINChangeRequest(newPin: "4826"), token: token).0
                    == 200)
            #expect(
                try await DeviceSecondFactorSteps.addBiometrics(app, biometricKey, pin: "4826", token: token).0 == 200)
            try await DeviceSecondFactorSteps.blockPIN(app, token: token)
            let late = try await DeviceSecondFactorSteps.biometricSignature(app, biometricKey, token: token)
            clock.advance(by: 301)
            let (status, body) = try await DeviceSecondFactorSteps.call(
                app, .POST, API.DeviceFactors.verifyBiometrics, late, token: token)
            #expect(status == 401 && body.contains(#""code":"expired""#), "\(body)")
            #expect(
                try await DeviceSecondFactorSteps.state(app, token: token).pinBlocked,
                "an expired challenge unblocks nothing")
            let fresh = try await DeviceSecondFactorSteps.biometricSignature(app, biometricKey, token: token)
            #expect(
                try await DeviceSecondFactorSteps.call(
                    app, .POST, API.DeviceFactors.verifyBiometrics, fresh, token: token
                ).0 == 200)
        }
    }

    @Test func anotherUsersDeviceIsNotFoundAndAnonymousCallsAreRefused() async throws {
        try await withTestApp { app in
            let token = try await DeviceSecondFactorSteps.enrolled(app)
            #expect(
                try await DeviceSecondFactorSteps.setPIN(app, DevicePINChangeRequest(newPin: "4826"), token: token).0
                    == 200)
            let bob = try await Accounts.signUp(app, "bob", address: "10.0.0.2")
            let asBob = try await DeviceSecondFactorSteps.verifyPIN(app, "4826", token: bob.accessToken.token)
            #expect(asBob.0 == 404)
            let reset = try await DeviceSecondFactorSteps.setPIN(
                app, DevicePINChangeRequest(newPin: "5937"), token: bob.accessToken.token)
            #expect(reset.0 == 404)
            let anonymous = try await DeviceKeySteps.send(
                app, .POST, API.DeviceFactors.verifyPIN.path("iphone-1"), DevicePINRequest(pin: "4826"))
            #expect(anonymous.0 == 401)
            #expect(try await DeviceSecondFactorSteps.verifyPIN(app, "4826", token: token).0 == 200)
        }
    }
}

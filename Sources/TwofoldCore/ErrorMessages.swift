import Foundation

// What each error means to a person, for an alert; `failureReason` keeps the exact reason (its
// `description`) for a log.

extension OTPAuthURIError: LocalizedError {
    public var errorDescription: String? { "The authenticator link could not be read." }
    public var failureReason: String? { description }
}

extension OTPParameterError: LocalizedError {
    public var errorDescription: String? { "These authenticator settings are not supported." }
    public var failureReason: String? { description }
}

extension Base32.DecodingError: LocalizedError {
    public var errorDescription: String? { "The setup key is not valid: check it was typed as shown." }
    public var failureReason: String? { description }
}

extension DeviceKeyError: LocalizedError {
    public var errorDescription: String? { "The device key is not valid." }
    public var failureReason: String? { description }
}

extension QRCodeError: LocalizedError {
    public var errorDescription: String? { "The QR code could not be made." }
    public var failureReason: String? { description }
}

import Foundation

extension Problem: LocalizedError {
    /// The server's words: what went wrong this time, or the problem's title.
    public var errorDescription: String? { detail ?? title }
}

extension QueryRefusal: LocalizedError {
    public var errorDescription: String? {
        "The search could not be read: "
            + errors.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
    }
}

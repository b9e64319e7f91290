import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The SQLite database holds password hashes, sealed secrets and refresh-token hashes: its files
/// are the owner's alone (issue S item 12), wherever `DATABASE_URL` puts them. The file is
/// created 0600 before SQLite opens it (SQLite gives its `-wal` and `-shm` files the database
/// file's permissions), and files found with wider permissions are narrowed.
enum DatabaseFilePermissions {
    static func restrict(path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT, 0o600)
        guard descriptor >= 0 else { throw DataDirectoryError.cannotWrite(path) }
        close(descriptor)
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            guard chmod(file, 0o600) == 0 else { throw DataDirectoryError.cannotWrite(file) }
        }
    }
}

import Foundation
import NIOCore
import NIOPosix
import TwofoldServer

// Run Swift concurrency on NIO's event loops, so an async route handler does not hop between
// the global executor's threads and the event loop at every database call. Done first, before
// any task starts.
_ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()

exit(await ServerMain.run())

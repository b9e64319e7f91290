import Foundation
import TwofoldServer

exit(await ServerMain.run())

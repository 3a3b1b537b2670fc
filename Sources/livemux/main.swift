import Foundation
import LiveMuxCLI
// Linked for its preinit function alone (SIGINT, SIGTERM and SIGUSR1 held from the start).
import CProcessStart

exit(CLI.main(Array(CommandLine.arguments.dropFirst())))

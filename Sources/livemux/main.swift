import Foundation
import LiveMuxCLI

exit(CLI.main(Array(CommandLine.arguments.dropFirst())))

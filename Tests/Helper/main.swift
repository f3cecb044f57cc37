import Foundation
let arguments = Array(CommandLine.arguments.dropFirst())
let rest = Array(arguments.dropFirst())
switch arguments.first {
case "userdefaults-write": UserDefaultsCommands.write(rest)
case "userdefaults-read": UserDefaultsCommands.read(rest)
default: exit(64)
}

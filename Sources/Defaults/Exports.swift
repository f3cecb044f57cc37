// The storage core and its suites are part of this library's API: `import Defaults` brings them.
@_exported import DefaultsStorage

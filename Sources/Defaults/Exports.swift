// The storage core and its suites, and sync's stores and records, are part of this library's
// API: `import Defaults` brings them.
@_exported import DefaultsStorage
@_exported import DefaultsSync

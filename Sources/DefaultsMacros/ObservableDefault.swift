import Defaults

/// Backs a property of an `@Observable` class with a `Defaults.Key`, so that the Observation
/// framework tracks it.
///
/// ```swift
/// import DefaultsMacros
/// import Observation
///
/// @Observable
/// final class PlayerModel {
///     @ObservableDefault(.volume)
///     @ObservationIgnored
///     var volume: Int
/// }
/// ```
///
/// Reading the property reads `Defaults[.volume]` and registers the access with the class's
/// observation registrar; assigning to it writes `Defaults[.volume]` inside `withMutation`. A
/// change made anywhere else — another object, `Defaults[.volume] = 3`, `reset()`, or
/// another process sharing a `FileSuite` — also reaches the registrar, so
/// `withObservationTracking`'s `onChange` (and SwiftUI, on Apple platforms) sees it. That part
/// starts with the first read of the property and stops when the object is released.
///
/// `@ObservationIgnored` is needed so that `@Observable` does not generate its own storage and
/// accessors for the property. The property has no initial value: the key's default is its value
/// until one is stored.
///
/// Changes made by other objects or processes are reported on the thread that made them visible
/// (the writing thread, or the suite's file watcher), as Observation reports any mutation.
@attached(accessor, names: named(get), named(set))
@attached(peer, names: prefixed(_defaultsObservation_))
public macro ObservableDefault<Value: Defaults.Serializable>(_ key: Defaults.Key<Value>) =
    #externalMacro(module: "DefaultsMacrosPlugin", type: "ObservableDefaultMacro")

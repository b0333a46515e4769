package load

// UseWorkers lets the external tests run each case on both engines.
var UseWorkers = &useWorkers

// Package inspect decides and renders what the commands that look and
// change nothing do: status (the default wait measured here without and
// with a request, the query, the startup holder and the boot service as
// read, and the diagnosis: why the waits here take what they take) and
// who (who holds the timer, and with --watch each change). It holds their
// results (the JSON shapes of docs/json.md) as functions of the seam's
// Host and of the OS roles it reads (System), tested against the model of Windows timers and an
// in-memory System (package sim); cmd/tickscope and the dashboard call
// here, and print.
package inspect

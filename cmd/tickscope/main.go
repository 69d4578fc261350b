// Command tickscope measures the timer resolution and wake-up latency a
// machine really delivers, finds the best setting, and holds it.
//
// This package only parses the command line and wires the internal packages
// together: one file per command. The output rules, which every command
// follows:
//
//   - Results go to standard output; progress, warnings, hints and errors to
//     standard error, so that `--json` output can always be piped.
//   - Messages on standard error start with "tickscope: error: ",
//     "tickscope: warning: " or "tickscope: hint: ", are lowercase and have no
//     final period. An error is one line.
//   - Exit codes: 0 success, 1 a failure of the OS or of the measurement
//     (the message names the call and its status), 2 bad command line (the
//     message names the flag, the value given and what is allowed; nothing
//     has been measured or changed).
//   - A command whose output could not be written to standard output (a
//     full disk, a closed terminal) exits 1 however it printed, saying
//     "tickscope: error: writing standard output: " and why, and writes
//     none of the files written after the report (--html, --cyclictest-json,
//     --histfile): run wraps standard output in a writer that keeps the
//     first failed write, checked once when the command returns (root.go's
//     stream). A process started with no standard output (Windows: a
//     handle that names nothing) writes nowhere and exits as its command
//     did.
package main

import (
	"os"
)

//go:generate go run github.com/tc-hib/go-winres@v0.3.3 make --in winres/winres.json --out rsrc --arch amd64,arm64

func main() { os.Exit(run(os.Args[1:])) }

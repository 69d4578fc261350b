package timerstate

import "time"

// ScanEvery is how often a hold with --while looks for its programs: a
// program that starts has the setting within about this long (a game
// spends longer than that loading), and a scan costs the holder a
// fraction of a millisecond (BENCHMARKS.md).
const ScanEvery = time.Second

// Where a hold with --while has an event source (the kernel's process
// events), it scans EventSettle after an announcement that matters (a
// burst is one scan), at most once every EventMinGap while they keep
// coming (a build starts programs all the time), and every
// EventScanEvery whatever it hears: the source only says when to look.
const (
	EventSettle    = 15 * time.Millisecond
	EventMinGap    = 250 * time.Millisecond
	EventScanEvery = 10 * time.Second
)

// How a hold with --while learns that a program starts or exits, as its
// report (hold.WhileReport.Source) and status say.
const (
	SourceEvents = "process events"
	SourceScan   = "scan"
)

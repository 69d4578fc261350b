// Package sim is the simulated machine that tickscope's --simulate and its
// tests run on: Host, a deterministic, seeded model of the Windows timer
// seen from one process (model.go, its scenarios in scenarios.go, and
// Paced, which runs it at the pace of a real clock), and System, an
// in-memory seam.System, seam.Startup and seam.Shell that records what the
// hold commands change (installs, deletes, stops, the global value,
// per-process slack, locks) and answers from fields a test sets.
//
// Everything computed on the model is reported as SIMULATED, never as a
// measurement, and nothing done on System reaches the machine.
package sim

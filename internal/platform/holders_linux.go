package platform

import (
	"context"
	"fmt"
	"os"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/who"
)

// Holders scans the real /proc and /sys (who.ScanLinux), with the value in
// force read from /dev/cpu_dma_latency as query reads it.
func (system) Holders(context.Context) (*who.Snapshot, error) {
	var dma who.DMALatency
	if us, err := readDMALatency(); err != nil {
		dma.Err = err
	} else {
		dma.Us = &us
	}
	return &who.Snapshot{Linux: who.ScanLinux(os.DirFS("/"), dma, os.Getpid())}, nil
}

// Linux announces no change of slack, policy or cpu_dma_latency holders:
// callers poll Holders.
func (system) HolderEvents(context.Context, <-chan struct{}, func(who.Event)) error {
	return fmt.Errorf("holder events on Linux: %w", seam.ErrUnsupported)
}

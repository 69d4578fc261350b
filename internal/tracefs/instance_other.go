//go:build !linux

package tracefs

import "context"

func open(context.Context, Options) (*Instance, error) { return nil, ErrUnsupported }

func (in *Instance) close() error { return ErrUnsupported }

func (in *Instance) openCPU(int) (*CPUReader, error) { return nil, ErrUnsupported }

func (r *CPUReader) readPage() ([]byte, error) { return nil, ErrUnsupported }

func (r *CPUReader) close() error { return ErrUnsupported }

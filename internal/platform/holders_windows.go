package platform

import (
	"context"
	"errors"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/who"
)

var errNoETW = &seam.OSError{Call: "the Kernel-Power ETW session", Err: errors.New("naming the holders on Windows is not in this build yet")}

func (system) Holders(context.Context) (*who.Snapshot, error)      { return nil, errNoETW }
func (system) HolderEvents(context.Context, func(who.Event)) error { return errNoETW }

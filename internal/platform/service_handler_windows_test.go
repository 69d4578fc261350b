package platform

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/windows/svc"

	"github.com/tickscope/tickscope/internal/seam"
)

// The boot service's answers to the service manager, without one: starting
// until the hold runs, then running and accepting Stop and Shutdown, the
// last state again for Interrogate, and on Stop or Shutdown stopping, which
// ends the hold's context; a hold that fails stops the service with a
// service-specific exit code.
func TestServiceHandlerAnswersTheServiceManager(t *testing.T) {
	for _, control := range []svc.Cmd{svc.Stop, svc.Shutdown} {
		t.Run(map[svc.Cmd]string{svc.Stop: "stop", svc.Shutdown: "shutdown"}[control], func(t *testing.T) {
			released := make(chan struct{})
			h := &serviceHandler{log: func(string, string) {}, serve: func(ctx context.Context, run seam.ServiceRun) error {
				run.Running()
				<-ctx.Done()
				close(released)
				return nil
			}}
			requests := make(chan svc.ChangeRequest)
			status := make(chan svc.Status)
			type exit struct {
				specific bool
				code     uint32
			}
			done := make(chan exit, 1)
			go func() {
				specific, code := h.Execute(nil, requests, status)
				done <- exit{specific, code}
			}()
			next := func() svc.Status {
				t.Helper()
				select {
				case s := <-status:
					return s
				case <-time.After(10 * time.Second):
					t.Fatal("no status within 10 s")
				}
				return svc.Status{}
			}
			if s := next(); s.State != svc.StartPending || s.Accepts != 0 {
				t.Fatalf("first status %+v, want start pending accepting nothing", s)
			}
			if s := next(); s.State != svc.Running || s.Accepts != svc.AcceptStop|svc.AcceptShutdown {
				t.Fatalf("once held %+v, want running, accepting Stop and Shutdown", s)
			}
			requests <- svc.ChangeRequest{Cmd: svc.Interrogate}
			if s := next(); s.State != svc.Running {
				t.Fatalf("Interrogate answered %+v, want running", s)
			}
			requests <- svc.ChangeRequest{Cmd: control}
			if s := next(); s.State != svc.StopPending {
				t.Fatalf("after %d: %+v, want stop pending", control, s)
			}
			select {
			case <-released:
			case <-time.After(10 * time.Second):
				t.Fatal("the hold's context did not end")
			}
			if e := <-done; e.specific || e.code != 0 {
				t.Errorf("exit %+v, want 0", e)
			}
		})
	}
	t.Run("the hold fails", func(t *testing.T) {
		h := &serviceHandler{log: func(string, string) {}, serve: func(context.Context, seam.ServiceRun) error { return errors.New("no timer") }}
		status := make(chan svc.Status, 4)
		specific, code := h.Execute(nil, make(chan svc.ChangeRequest), status)
		if !specific || code != 1 || h.err == nil {
			t.Errorf("exit %v %d, err %v; want service-specific 1", specific, code, h.err)
		}
	})
}

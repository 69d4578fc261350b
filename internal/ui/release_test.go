package ui

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// slowWithdrawal is the model, whose withdrawal of a setting, once armed,
// waits until the test lets it go on.
type slowWithdrawal struct {
	*sim.Host
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	proceed chan struct{}
}

func (h *slowWithdrawal) Apply(s timerinfo.Setting) (timerinfo.Setting, func() error, error) {
	granted, release, err := h.Host.Apply(s)
	if err != nil {
		return granted, release, err
	}
	return granted, func() error {
		h.mu.Lock()
		armed := h.armed
		h.armed = false
		h.mu.Unlock()
		if armed {
			close(h.entered)
			<-h.proceed
		}
		return release()
	}, nil
}

// TestReleaseShowsTheHoldUntilWithdrawn: while Release withdraws the
// page's setting, the state still shows it held (a page that read
// "nothing" then would tell the user the setting was gone while it was
// still in force), a second Release says it is under way, and once
// Release answers the state shows nothing held.
func TestReleaseShowsTheHoldUntilWithdrawn(t *testing.T) {
	model, err := sim.NewHost("narrow-band", 1)
	if err != nil {
		t.Fatal(err)
	}
	host := &slowWithdrawal{Host: model, entered: make(chan struct{}), proceed: make(chan struct{})}
	s, _ := newTestServerOn(t, host, "narrow-band")
	if out := post(t, s, "hold", `{"resolution":"5118"}`); out.Error != "" {
		t.Fatalf("hold: %+v", out)
	}
	host.mu.Lock()
	host.armed = true
	host.mu.Unlock()
	released := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest("POST", "http://"+s.addr+"/"+s.token+"/api/release", strings.NewReader("{}"))
		req.Header.Set("Origin", s.origin)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			released <- err.Error()
			return
		}
		defer resp.Body.Close()
		var out Outcome
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			released <- err.Error()
			return
		}
		released <- out.Error + out.Text
	}()
	select {
	case <-host.entered:
	case <-time.After(time.Minute):
		t.Fatal("Release did not withdraw the setting within a minute")
	}
	// What the state reads of the hold (the model's own answers wait for
	// the withdrawal, which holds the model; a real host's do not).
	s.mu.Lock()
	held := s.held != nil
	reserved := s.reserveHold()
	s.mu.Unlock()
	if !held {
		t.Error("while the setting was being withdrawn the state read nothing held")
	}
	if reserved == nil || !strings.Contains(reserved.Error(), "is releasing") {
		t.Errorf("a Hold meanwhile: %v", reserved)
	}
	if again := post(t, s, "release", `{}`); !strings.Contains(again.Error, "already being released") {
		t.Errorf("a second Release meanwhile: %+v", again)
	}
	close(host.proceed)
	if out := <-released; !strings.Contains(out, "released after") {
		t.Errorf("release: %q", out)
	}
	if st := s.state(); st.Held != nil {
		t.Errorf("after Release the state shows %+v held", st.Held)
	}
}

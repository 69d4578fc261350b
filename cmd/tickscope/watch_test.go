package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/testlock"
)

// TestListenPortInUse: a port in use exits 1 with one line naming it, for
// watch and for apply.
func TestListenPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	log := t.TempDir() + "/never.log"
	cases := [][]string{{"watch", "--listen", l.Addr().String(), "--log", log}}
	if runtime.GOOS == "linux" && os.Geteuid() == 0 {
		// apply checks its flags, then binds, then holds: the port in use
		// ends it before /dev/cpu_dma_latency is opened, but a regression
		// would hold it, so the lock is taken.
		release, err := testlock.Lock(testlock.DMALatency)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		cases = append(cases, []string{"apply", "--dma-latency", "7", "--for", "1s", "--listen", l.Addr().String()})
	} else {
		t.Log("apply --listen is not run: its hold, --dma-latency, needs Linux and root")
	}
	for _, args := range cases {
		var stdout, stderr bytes.Buffer
		a := &app{stdout: &stdout, stderr: &stderr}
		code := a.execute(args)
		want := regexp.MustCompile(`^tickscope: error: listening on 127\.0\.0\.1:[0-9]+ for --listen: bind: address already in use\n$`)
		if code != 1 || !want.MatchString(stderr.String()) || stdout.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want 1 and one line", args, code, stderr.String(), stdout.String())
		}
	}
	if _, err := os.Stat(log); err == nil {
		t.Error("the log was created by a watch that could not listen")
	}
}

// TestApplyHelpSaysItChecks: apply --help names the check interval the
// hold uses, and no longer claims it does nothing while holding.
func TestApplyHelpSaysItChecks(t *testing.T) {
	var stdout, stderr bytes.Buffer
	a := &app{stdout: &stdout, stderr: &stderr}
	if code := a.execute([]string{"apply", "--help"}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	help := strings.Join(strings.Fields(stdout.String()), " ")
	for _, want := range []string{fmt.Sprintf("Every %d s and after each resume from sleep", int(hold.RecheckEvery.Seconds())), "re-applies it if lost", "reapplies in --json", "between checks it uses no CPU"} {
		if !strings.Contains(help, want) {
			t.Errorf("apply --help lacks %q:\n%s", want, stdout.String())
		}
	}
}

package main

import (
	"bytes"
	"net"
	"os"
	"regexp"
	"testing"
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
	for _, args := range [][]string{
		{"watch", "--listen", l.Addr().String(), "--log", log},
	} {
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

package tracefs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// Close unmounts a tracefs of ours; one in use (EBUSY: another run waited
// on this one and holds a file of it) stays mounted, said, not an error,
// and the marker stays for the run that closes last.
func TestCloseUnmount(t *testing.T) {
	for _, tc := range []struct {
		name        string
		err         error
		wantErr     bool
		leftMounted bool
		markerKept  bool
	}{
		{"unmounted", nil, false, false, false},
		{"in use", unix.EBUSY, false, true, true},
		{"refused", unix.EPERM, true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "marker")
			if err := os.WriteFile(marker, []byte("40 /sys/kernel/tracing\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			oldMarker, oldUnmount := markerPath, unmount
			t.Cleanup(func() { markerPath, unmount = oldMarker, oldUnmount })
			markerPath = marker
			var called []string
			unmount = func(target string, flags int) error {
				called = append(called, target)
				return tc.err
			}
			in := &Instance{Root: "/sys/kernel/tracing", Mounted: true, ours: true, readers: map[*CPUReader]bool{}, lockFD: -1}
			err := in.Close()
			if (err != nil) != tc.wantErr {
				t.Errorf("Close: %v, want an error %v", err, tc.wantErr)
			}
			if tc.wantErr && !errors.Is(err, tc.err) {
				t.Errorf("Close: %v, not %v", err, tc.err)
			}
			if len(called) != 1 || called[0] != in.Root {
				t.Errorf("unmounted %q", called)
			}
			if in.LeftMounted != tc.leftMounted {
				t.Errorf("LeftMounted %v, want %v", in.LeftMounted, tc.leftMounted)
			}
			if _, err := os.Stat(marker); (err == nil) != tc.markerKept {
				t.Errorf("marker kept %v, want %v", err == nil, tc.markerKept)
			}
		})
	}
}

// A run that did not mount tracefs unmounts it only when the marker names
// the mount there now, not one of that point before it.
func TestMarkedOurs(t *testing.T) {
	old := markerPath
	t.Cleanup(func() { markerPath = old })
	markerPath = filepath.Join(t.TempDir(), "marker")
	if markedOurs(defaultMount) {
		t.Error("no marker, yet ours")
	}
	if err := os.WriteFile(markerPath, []byte("0 "+defaultMount+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if markedOurs(defaultMount) {
		t.Error("a marker of another mount ID, yet ours")
	}
	ms, err := tracefsMounts()
	if err != nil || len(ms) == 0 {
		t.Skip("tracefs is not mounted here", err)
	}
	if err := os.WriteFile(markerPath, []byte(ms[0].id+" "+ms[0].point+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !markedOurs(ms[0].point) {
		t.Errorf("the marker names the mount at %s (%s), yet not ours", ms[0].point, ms[0].id)
	}
	if markedOurs(ms[0].point + "x") {
		t.Error("the marker of another point, yet ours")
	}
}

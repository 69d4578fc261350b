package watch

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/outfile"
	"github.com/tickscope/tickscope/internal/who"
)

// fullDisk is a log file on a disk with room bytes left: a write past
// them writes what fits and fails with ENOSPC, as write(2) does.
type fullDisk struct {
	*os.File
	room int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) <= d.room {
		d.room -= len(p)
		return d.File.Write(p)
	}
	n, _ := d.File.Write(p[:d.room])
	d.room = 0
	return n, syscall.ENOSPC
}

// logEvent is one change event, about 110 bytes as a line.
func logEvent(i int) Event {
	return Event{Time: time.Unix(int64(i), 0).UTC(), Event: EventChange, Changes: []Change{{"timer_slack", "1ns", "2ns"}}}
}

// wholeLines checks that data is JSON lines, each whole, and returns how
// many.
func wholeLines(t *testing.T, data []byte) int {
	t.Helper()
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("the log ends in a torn line: %q", data[max(0, len(data)-40):])
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, line := range lines {
		var e Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Errorf("line %d %q: %v", i+1, line, err)
		}
	}
	return len(lines)
}

// TestLogCutsATornLine: when the disk fills in the middle of a line, the
// write fails and the log is cut back to its last whole line; the event
// written before it are kept.
func TestLogCutsATornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "watch.log")
	log, err := OpenLog("log", path)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	line, _ := json.Marshal(logEvent(0))
	disk := &fullDisk{File: log.f.(*os.File), room: 2*(len(line)+1) + len(line)/2}
	log.f = disk
	var writeErr error
	written := 0
	for i := range 5 {
		if writeErr = log.Write(logEvent(i)); writeErr != nil {
			break
		}
		written++
	}
	if written != 2 || !errors.Is(writeErr, syscall.ENOSPC) {
		t.Fatalf("%d lines written, then %v; want 2, then no space left", written, writeErr)
	}
	data, _ := os.ReadFile(path)
	if n := wholeLines(t, data); n != 2 {
		t.Errorf("%d lines kept, want 2:\n%s", n, data)
	}
}

// TestWriteLineIsPrintable: the log and watch --json show an error's text
// and a holder's name with every character that does not print escaped
// (\u009b, \u007f: encoding/json leaves those as they are), meaning the
// same JSON value.
func TestWriteLineIsPrintable(t *testing.T) {
	const forged = "\x1b[2K\r\u009b2J\x7f\u202e"
	holders := []who.Hold{{PID: 7, Name: forged, What: who.WhatDMALatency}}
	var b strings.Builder
	if err := WriteLine(&b, Event{Time: time.Unix(0, 0).UTC(), Event: EventError, Error: forged, Holders: &holders}); err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSuffix(b.String(), "\n")
	for _, r := range line {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == '\u202e' {
			t.Fatalf("the line holds %U: %q", r, line)
		}
	}
	var e Event
	if err := json.Unmarshal([]byte(line), &e); err != nil || e.Error != forged || (*e.Holders)[0].Name != forged {
		t.Errorf("the line reads back as %+v (%v)", e, err)
	}
}

// OpenLog opens --log as the watch command does (outfile.OpenLines, then
// NewLog), for the tests.
func OpenLog(flag, path string) (*Log, error) {
	f, err := outfile.OpenLines(flag, path)
	if err != nil {
		return nil, err
	}
	return NewLog(f), nil
}

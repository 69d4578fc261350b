package startup_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/startup"
)

func TestStartupTexts(t *testing.T) {
	tests := []struct {
		name  string
		write func(*bytes.Buffer)
		want  string
	}{
		{"removed a holder whose pid is unreadable", func(b *bytes.Buffer) {
			startup.WriteRemove(b, &startup.RemoveResult{Startup: "task", Ended: true})
		}, "ended the holder (its process id was unreadable)\n"},
		{"nothing to remove", func(b *bytes.Buffer) { startup.WriteRemove(b, &startup.RemoveResult{Startup: "task"}) },
			"nothing to remove: no task is installed and no holder runs\n"},
		{"the task removed, the service left (the command's error says why)", func(b *bytes.Buffer) {
			startup.WriteRemove(b, &startup.RemoveResult{Startup: "task", Installed: true, Deleted: true, Service: &startup.ServiceRemoval{Service: "service", Left: "why"}})
		}, "deleted the task\n"},
		{"only a service left: not nothing to remove", func(b *bytes.Buffer) {
			startup.WriteRemove(b, &startup.RemoveResult{Startup: "task", Service: &startup.ServiceRemoval{Service: "service", Left: "why"}})
		}, ""},
		{"persist, pid unknown", func(b *bytes.Buffer) {
			startup.WritePersist(b, &startup.PersistResult{Startup: "task", Exe: "t.exe", Args: []string{"apply"}, When: "boot", Running: true})
		}, "installed the task: it runs t.exe apply at boot\nundo: tickscope startup remove\nthe holder runs and the setting is in force\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		tt.write(&b)
		if b.String() != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, b.String(), tt.want)
		}
	}
	if w := startup.PersistWarnings(&startup.PersistResult{StartErr: errors.New("denied"), When: "boot"}); len(w) != 1 || w[0] != "starting it now failed: denied (it will start at the next boot)" {
		t.Errorf("PersistWarnings = %q", w)
	}
	// An elevated --persist names the elevated account's SID: said even on
	// a dry run, whose definition is printed.
	if w := startup.PersistWarnings(&startup.PersistResult{ElevatedUser: true, Definition: "<Task/>"}); len(w) != 1 || !strings.Contains(w[0], "runs elevated") {
		t.Errorf("PersistWarnings(elevated) = %q", w)
	}
}

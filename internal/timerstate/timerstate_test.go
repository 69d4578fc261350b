package timerstate_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerstate"
)

// The processes running are listed by program then process id, and named
// so in a line.
func TestRunningList(t *testing.T) {
	programs := []string{"game.exe", "editor.exe"}
	got := timerstate.RunningList(map[int]seam.ProgramProcess{
		9: {Program: 0, PID: 9}, 3: {Program: 0, PID: 3}, 7: {Program: 1, PID: 7},
	}, programs)
	want := []timerstate.ProgramRunning{{Program: "editor.exe", PID: 7}, {Program: "game.exe", PID: 3}, {Program: "game.exe", PID: 9}}
	if !slices.Equal(got, want) {
		t.Errorf("RunningList = %v, want %v", got, want)
	}
	if s := timerstate.HoldingFor(got); s != "editor.exe (pid 7), game.exe (pid 3), game.exe (pid 9)" {
		t.Errorf("HoldingFor = %q", s)
	}
	if s := timerstate.HoldingFor(nil); s != "" {
		t.Errorf("HoldingFor(nil) = %q, want empty", s)
	}
}

// StartupDefinition reads what tickscope's startup holder holds, and for
// which programs; nothing from a definition that is missing, unreadable,
// damaged or another's.
func TestStartupDefinition(t *testing.T) {
	task := func(args []string, description string) []byte {
		data, err := persist.TaskXML(persist.Task{Exe: `C:\Tools\tickscope-holder.exe`, Args: args, Description: description, DelaySeconds: 15})
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	ours := "Holds 1 ms. " + persist.Marker("0.1.0")
	sys := &sim.System{}
	if held, while := timerstate.StartupDefinition(sys); !held.IsZero() || while != nil {
		t.Errorf("no startup mechanism: %v, %v", held, while)
	}
	st := sys.NewStartup("task")
	st.Definition = task([]string{"apply", "--ms", "1", "--while", "game.exe,other.exe"}, ours)
	if held, while := timerstate.StartupDefinition(sys); held.Resolution100ns != 10000 || !slices.Equal(while, []string{"game.exe", "other.exe"}) {
		t.Errorf("ours with --while: %v, %v", held, while)
	}
	st.Definition = task([]string{"apply", "--ms", "1"}, ours)
	if held, while := timerstate.StartupDefinition(sys); held.Resolution100ns != 10000 || while != nil {
		t.Errorf("ours: %v, %v", held, while)
	}
	for name, edit := range map[string]func(){
		"none": func() { st.Definition = nil },
		"unreadable": func() {
			st.Definition, st.ReadErr = task([]string{"apply", "--ms", "1"}, ours), errors.New("access denied")
		},
		"damaged":   func() { st.Definition, st.ReadErr = []byte("<Task"), nil },
		"another's": func() { st.Definition, st.ReadErr = task([]string{"apply", "--ms", "1"}, "Someone else's task"), nil },
	} {
		edit()
		if held, while := timerstate.StartupDefinition(sys); !held.IsZero() || while != nil {
			t.Errorf("%s: %v, %v", name, held, while)
		}
	}
}

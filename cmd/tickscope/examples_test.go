package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestExamples: every command has an Example section, and each of its
// invocations parses as that command's flags and arguments, so that the
// examples cannot go stale when a flag changes.
func TestExamples(t *testing.T) {
	a := &app{stdout: io.Discard, stderr: io.Discard}
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		if !cmd.IsAvailableCommand() && cmd != cmd.Root() || strings.HasPrefix(cmd.CommandPath(), "tickscope completion") {
			return
		}
		if cmd.Example == "" {
			t.Errorf("%s has no Example", cmd.CommandPath())
		}
		for line := range strings.Lines(cmd.Example) {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			args := strings.Fields(line)
			if args[0] != "tickscope" {
				t.Errorf("%s: example %q does not start with tickscope", cmd.CommandPath(), line)
				continue
			}
			root := a.rootCommand() // afresh: a flag is given once
			found, rest, err := root.Find(args[1:])
			if err != nil {
				t.Errorf("%q: %v", line, err)
				continue
			}
			if err := found.ParseFlags(rest); err != nil {
				t.Errorf("%q: %v", line, flagError(err))
				continue
			}
			if found.Args != nil {
				if err := found.Args(found, found.Flags().Args()); err != nil {
					t.Errorf("%q: %v", line, err)
				}
			}
		}
	}
	walk(a.rootCommand())
}

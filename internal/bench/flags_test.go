package bench_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/bench"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func file(command, os string) *rawfile.File {
	q := &timerinfo.Report{OS: os}
	switch os {
	case "linux":
		q.Linux = &timerinfo.Linux{}
	case "windows":
		q.Windows = &timerinfo.Windows{}
	}
	return &rawfile.File{Command: command, Query: q}
}

func TestCheckFileFlags(t *testing.T) {
	tests := []struct {
		command, os string
		flags       []string
		want        string // "" when accepted
	}{
		{"measure", "linux", nil, ""},
		{"measure", "linux", []string{"json"}, ""},
		{"measure", "linux", []string{"prefer"}, "--prefer judges a bench's file; f.json is a measure file"},
		{"measure", "windows", []string{"rows"}, "--rows judges a bench's file; f.json is a measure file"},
		{"measure", "linux", []string{"budget-p50"}, "--budget-p50 judges a bench's file"},
		{"curve", "windows", []string{"budget-p95"}, "--budget-p95 judges a bench's file; f.json is a curve file"},
		{"compare", "linux", []string{"budget-lateness"}, "--budget-lateness judges a bench's file; f.json is a compare file"},
		{"compare", "darwin", []string{"prefer", "rows"}, "--prefer judges a bench's file"},
		{"bench", "windows", []string{"prefer", "rows", "budget-p50", "budget-p95"}, ""},
		{"bench", "linux", []string{"prefer", "rows", "budget-lateness"}, ""},
		{"bench", "linux", []string{"budget-p50"}, "--budget-p50 judges the Windows bench; f.json is from the Linux bench"},
		{"bench", "linux", []string{"budget-p95"}, "--budget-p95 judges the Windows bench"},
		{"bench", "windows", []string{"budget-lateness"}, "--budget-lateness judges the Linux bench; f.json is from the Windows bench"},
	}
	for _, tt := range tests {
		err := bench.CheckFileFlags(file(tt.command, tt.os), "f.json", func(flag string) bool { return slices.Contains(tt.flags, flag) })
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s file from %s with %v: refused: %v", tt.command, tt.os, tt.flags, err)
		case tt.want == "":
		case err == nil || !strings.Contains(err.Error(), tt.want):
			t.Errorf("%s file from %s with %v: got %v, want %q", tt.command, tt.os, tt.flags, err, tt.want)
		default:
			var usage *options.UsageError
			if !errors.As(err, &usage) {
				t.Errorf("%v is not a usage error (exit 2)", err)
			}
		}
	}
}

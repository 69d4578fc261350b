package startup

import "testing"

// The startup holder is the holder command without --as-service, as the task
// and unit run it, or apply --as-startup, as those earlier versions
// installed run it; the boot service and a person's apply are not.
func TestAsStartup(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want bool
	}{
		{[]string{"holder", "--resolution", "10000", "--no-console", "--no-esc"}, true},
		{[]string{"holder", "--dma-latency", "0", "--no-esc", "--while", "game"}, true},
		{[]string{"holder", "--as-service", "--resolution", "10000", "--no-esc"}, false},
		{[]string{"apply", "--resolution", "10000", "--no-console", "--no-esc", "--as-startup"}, true},
		{[]string{"apply", "--resolution", "10000", "--no-esc", "--as-service"}, false},
		{[]string{"apply", "--ms", "1"}, false},
		{nil, false},
	} {
		if got := asStartup(tt.args); got != tt.want {
			t.Errorf("asStartup(%q) = %v, want %v", tt.args, got, tt.want)
		}
	}
}

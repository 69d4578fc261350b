package tracefs

import "testing"

// CPUMask writes what tracing_cpumask reads back: 32-bit words, the most
// significant first, comma-separated.
func TestCPUMask(t *testing.T) {
	for _, c := range []struct {
		cpus []int
		want string
	}{
		{[]int{}, "0"},
		{[]int{0}, "1"},
		{[]int{0, 1}, "3"},
		{[]int{1, 3, 31}, "8000000a"},
		{[]int{32}, "1,00000000"},
		{[]int{1, 33}, "2,00000002"},
		{[]int{64, 0}, "1,00000000,00000001"},
	} {
		if got := CPUMask(c.cpus); got != c.want {
			t.Errorf("CPUMask(%v) = %q, want %q", c.cpus, got, c.want)
		}
	}
}

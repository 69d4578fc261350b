package main

import "testing"

func TestParseHistogram(t *testing.T) {
	out := []byte("# /dev/cpu_dma_latency set to 0us\n# Histogram\n000000 000000\n000010 000003\n000011 000005\n000020 000002\n# Total: 000000010\n# Min Latencies: 00010\n")
	got, err := parseHistogram(out)
	if err != nil {
		t.Fatal(err)
	}
	if p50, p99 := got.percentile(50), got.percentile(99); p50 != 11 || p99 != 20 {
		t.Errorf("p50, p99 = %v, %v; want 11, 20", p50, p99)
	}
	if _, err := parseHistogram([]byte("# nothing\n")); err == nil {
		t.Error("empty output accepted")
	}
}

func TestAgrees(t *testing.T) {
	for _, tt := range []struct {
		a, b float64
		want bool
	}{{100, 104, true}, {100, 114, true}, {100, 120, false}, {10, 15, true}, {10, 16, false}} {
		if got := agrees(tt.a, tt.b); got != tt.want {
			t.Errorf("agrees(%v, %v) = %v", tt.a, tt.b, got)
		}
	}
}

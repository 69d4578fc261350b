package sweep_test

import "fmt"

func fmtRow(req uint32, p50 int64, lo, hi uint32, n int) string {
	return fmt.Sprintf("%d p50 %.4f band %d-%d (%d)", req, float64(p50)/1e6, lo, hi, n)
}

package precise_test

import (
	"time"

	"github.com/tickscope/tickscope/internal/platform/winapi"
)

// hrNow reads QueryPerformanceCounter: Go's clock on Windows follows the
// timer interrupt and cannot time a sub-tick wait.
func hrNow() time.Duration {
	f, _ := winapi.QueryPerformanceFrequency()
	var c int64
	winapi.QueryPerformanceCounter(&c)
	return time.Duration(c/f*int64(time.Second) + c%f*int64(time.Second)/f)
}

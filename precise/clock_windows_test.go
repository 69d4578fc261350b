package precise_test

import (
	"time"

	"github.com/tickscope/tickscope/internal/winapi"
)

// hrNow reads QueryPerformanceCounter: Go's clock on Windows follows the
// timer interrupt and cannot time a sub-tick wait.
func hrNow() time.Duration { return time.Duration(winapi.QPCNanos()) }

//go:build !linux

package procstat

import "errors"

// SelfSchedStat reads the calling thread's schedstat: Linux only.
func SelfSchedStat() (SchedStat, error) {
	return SchedStat{}, errors.New("procstat: schedstat is Linux's")
}

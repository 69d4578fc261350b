package main

import (
	"time"

	"golang.org/x/sys/windows"
)

func cpuTime() time.Duration {
	var creation, exit, kernel, user windows.Filetime
	if windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user) != nil {
		return 0
	}
	return time.Duration((int64(kernel.HighDateTime)<<32|int64(kernel.LowDateTime))+(int64(user.HighDateTime)<<32|int64(user.LowDateTime))) * 100
}

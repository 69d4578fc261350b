//go:build windows && (amd64 || arm64)

package winapi

import "unsafe"

// The ETW structures at their documented 64-bit sizes: the build fails if
// a field is missing, misplaced or of the wrong width.
var (
	_ [120 - unsafe.Sizeof(EventTraceProperties{})]byte
	_ [unsafe.Sizeof(EventTraceProperties{}) - 120]byte
	_ [88 - unsafe.Sizeof(EventTrace{})]byte
	_ [unsafe.Sizeof(EventTrace{}) - 88]byte
	_ [280 - unsafe.Sizeof(TraceLogfileHeader{})]byte
	_ [unsafe.Sizeof(TraceLogfileHeader{}) - 280]byte
	_ [448 - unsafe.Sizeof(EventTraceLogfile{})]byte
	_ [unsafe.Sizeof(EventTraceLogfile{}) - 448]byte
	_ [80 - unsafe.Sizeof(EventHeader{})]byte
	_ [unsafe.Sizeof(EventHeader{}) - 80]byte
	_ [112 - unsafe.Sizeof(EventRecord{})]byte
	_ [unsafe.Sizeof(EventRecord{}) - 112]byte
	_ [424 - unsafe.Offsetof(EventTraceLogfile{}.EventRecordCallback)]byte
	_ [unsafe.Offsetof(EventTraceLogfile{}.EventRecordCallback) - 424]byte
	_ [96 - unsafe.Offsetof(EventRecord{}.UserData)]byte
	_ [unsafe.Offsetof(EventRecord{}.UserData) - 96]byte
)

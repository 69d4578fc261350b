package winapi

// The consumer mode explain's kernel session is read with
// ("EVENT_TRACE_LOGFILEW structure (evntrace.h)", Microsoft Learn):
// PROCESS_TRACE_MODE_RAW_TIMESTAMP leaves EVENT_HEADER.TimeStamp as the
// session logged it (QueryPerformanceCounter counts, with
// Wnode.ClientContext 1) instead of converting it to system time, so that
// it is the clock of a DPC's or ISR's InitialTime and of tickscope's
// samples.
const PROCESS_TRACE_MODE_RAW_TIMESTAMP = 0x00001000

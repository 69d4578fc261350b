// Package etwkernel is the Windows science of tickscope's attribution of
// late wake-ups: the NT kernel logger's classic (MOF) events as a 64-bit
// Windows delivers them in an EVENT_RECORD, and the pure attribution of
// one late Sleep(1), or waitable-timer wait, to its causes. It has no OS
// code and is tested on every OS. The session that feeds it runs in
// internal/explain on Windows; what it is (its properties block, laid out
// here so that it is tested on every OS) is in session.go.
//
// # The events
//
// Each layout is the MOF class's on Microsoft Learn, with a pointer 8
// bytes and the fields packed:
//
//   - "PerfInfo class": the class GUID {ce1dbfb4-137e-4da6-87b0-3f59aa102cbc};
//     event types 66 (threaded DPC), 68 (DPC), 69 (timer DPC) and 67 (ISR).
//   - "DPC class": InitialTime (the entry time, "WmiTime": the session's
//     clock), Routine (a pointer), 16 bytes.
//   - "ISR class": InitialTime, Routine, ReturnValue (claimed), Vector,
//     Reserved (uint16), 20 bytes. The page names no MessageIndex; the
//     last two bytes are kept as Reserved, uninterpreted.
//   - "Thread_V2 class": {3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c}; event
//     types 36 (CSwitch) and 50 (ReadyThread).
//   - "CSwitch class": NewThreadId, OldThreadId, NewThreadPriority,
//     OldThreadPriority, PreviousCState, SpareByte, OldThreadWaitReason,
//     OldThreadWaitMode, OldThreadState, OldThreadWaitIdealProcessor,
//     NewThreadWaitTime, Reserved, 24 bytes.
//   - "ReadyThread class": TThreadId, AdjustReason, AdjustIncrement,
//     Flag, Reserved, 8 bytes.
//   - "Image class": {2cb15d1d-5fc1-11d2-abe1-00a0c911f518} (evntrace.h's
//     ImageLoadGuid; not ...-00a0c91e2d4b); event types 10 (load), 2
//     (unload), 3 and 4 (the rundown at the start and end of the session).
//   - "Image_Load class": ImageBase, ImageSize (pointer-sized),
//     ProcessId, ImageChecksum, TimeDateStamp, Reserved0, DefaultBase (a
//     pointer), Reserved1 to Reserved4, then FileName, NUL-terminated
//     UTF-16: 56 bytes and the name. Routines are mapped to drivers with
//     it, as the DPC and ISR pages say to.
//   - "EVENT_RECORD structure", "EVENT_HEADER structure" and
//     "ETW_BUFFER_CONTEXT structure": a classic event carries its class
//     GUID as ProviderId and its event type as the descriptor's Opcode;
//     the processor is the buffer context's ProcessorNumber (its
//     ProcessorIndex under EVENT_HEADER_FLAG_PROCESSOR_INDEX); TimeStamp is
//     QPC ticks only when the session was started with
//     Wnode.ClientContext = 1 ("WNODE_HEADER") and is consumed with
//     PROCESS_TRACE_MODE_RAW_TIMESTAMP: otherwise ETW converts it to system
//     time while the payload's InitialTime stays raw, and an execution
//     time (TimeStamp − InitialTime) means nothing.
//
// Every decoder checks the class, the event type, the header's pointer
// size (64-bit), the version and the size, and decodes nothing it cannot
// check: the classes document EventVersion(2); an earlier version (whose
// layouts are other classes, Image_V1_Load's among them) is refused; at
// version 2 the payload must be exactly the documented size; a later
// version must be at least that long and only the documented fields are
// read, the convention of Microsoft's TraceEvent parser (Event.Meta's
// Extended says so). The PerfInfo events of the PERF_TIMER and
// PERF_CLOCK_INTERRUPT group masks have no documented payload and are
// not decoded. The tests lay out records as Windows would (BuildRecord
// and Encode, in fixture_test.go).
//
// # The attribution of one late wait
//
// First the tick model: a Sleep, and a waitable timer that is not
// high-resolution, expires at the first clock tick at or after its
// deadline, so that its lateness up to that tick is what the timer
// period in force allows (Allowed); only the rest (Excess) is late. The
// period and the ticks' times are inputs; without the ticks, a whole
// period is allowed.
//
// Then the excess, [expected tick, woke), is cut at the events seen: the
// clock interrupt (an input: ClockAt), the ReadyThread of the measuring
// thread, the CSwitch to it. Before the ready, on the processor that
// readied it: ISR and DPC executions go to their drivers; the rest is
// "clock interrupt late" before the clock interrupt and "clock interrupt
// to ready" after it (unexplained when the clock interrupt was not
// observed). From the ready to the switch, on the waking processor: ISR
// and DPC time by driver; the threads that ran, with their priorities;
// time the processor was idle is "idle exit" when the switch came from
// the idle thread with PreviousCState above 0, else "readied on another
// processor" when the ready was logged on another one; the rest, and
// everything after the switch, is unexplained. An ISR inside a DPC owns
// its time (the innermost execution, the one entered last, wins). The
// causes always sum to the excess, none is negative, and the unexplained
// part is always listed.
//
// Summarize is the LatencyMon-style table beside it: by driver, the
// highest and total ISR and DPC execution time and the counts in the
// buckets of BucketBounds (which says which and why).
//
// # What only real Windows can check
//
// Everything this package computes from fixtures is SIMULATED, and says
// so where it is shown. Only real Windows can show: which versions and
// sizes each build logs (a later version read as an extension of the
// documented one is TraceEvent's convention, not Microsoft Learn's);
// that a private system-logger session delivers these events as the NT
// Kernel Logger does; that InitialTime and the raw TimeStamp are the
// same QPC clock as tickscope's samples; which thread and processor a
// ReadyThread is logged on when a timer expires (the tick's processor is
// taken to be the readying one); what process Image_Load gives drivers
// and whether the rundown covers every driver; what PreviousCState's
// values mean on a given machine (Windows' C-state index, not the
// hardware's); the clock interrupt's own event, whose payload is
// undocumented; and whether Sleep(1) expires at the first tick at or
// after its deadline on every build.
package etwkernel

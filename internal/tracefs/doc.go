// Package tracefs reads the Linux kernel's tracing file system: the layout
// of each trace event as the kernel describes it, the per-CPU binary ring
// buffer, and the per-CPU statistics of lost events. It is the reading layer
// of tickscope's attribution of late wake-ups to their causes from generic
// tracepoints (timer, sched, irq, power), for kernels without the timerlat
// and osnoise tracers.
//
// What it reads, and where each format is published:
//
//   - events/SYSTEM/EVENT/format: the event's name, its ID (the value of
//     its common_type field) and its fields, each with its C type, offset,
//     size and signedness (Documentation/trace/events.rst).
//     Fields are found by name, never by a fixed offset: they move between
//     kernels (6.18 added was_armed to timer:hrtimer_start;
//     sched:sched_migrate_task's comm became a __data_loc field). A
//     __data_loc field is a 32-bit word whose low 16 bits are the offset of
//     the data within the event and whose high 16 bits its length; a
//     __rel_loc field (Linux 5.17 on) counts its offset from the end of the
//     word (include/trace/stages/stage5_get_offsets.h, and libtraceevent's
//     event-parse.c, the reference reader).
//   - events/header_page and events/header_event: the ring buffer's page
//     header (u64 timestamp, the local_t commit word, the data offset) and
//     the compressed event header (type_len 5 bits, time_delta 27 bits, an
//     array of 32-bit words). The event types and their lengths are those of
//     include/linux/ring_buffer.h (enum ring_buffer_type) and
//     kernel/trace/ring_buffer.c; Documentation/trace/ring-buffer-design.rst
//     describes the pages. ReadPage follows the kernel's own reader
//     (rb_buffer_peek, rb_update_read_stamp, rb_fix_abs_ts) and
//     libtraceevent's kbuffer-parse.c.
//   - per_cpu/cpuN/trace_pipe_raw: whole ring-buffer pages (sub-buffers) in
//     the layout above, consumed as they are read (Documentation/trace/ftrace.rst).
//   - per_cpu/cpuN/stats: entries, overrun, commit overrun, bytes, the
//     oldest event's and the current time stamp, dropped and read events
//     (Documentation/trace/ftrace.rst, the per_cpu directory;
//     kernel/trace/trace.c, tracing_stats_read).
//
// Byte order: the ring buffer and the events are written in the kernel's
// (the host's) byte order. This package decodes little-endian only, the
// order of x86-64 and of arm64 as Linux runs them; Open refuses a
// big-endian host rather than misread it.
//
// The pure code (formats, pages, stats) builds and is tested on every OS,
// on fixtures copied from two kernels (testdata/README.md). Open, the one
// part that changes the system, is Linux-only: it makes a tracefs instance
// of tickscope's own (instances/tickscope-explain) and never touches the
// top-level buffer or its settings.
package tracefs

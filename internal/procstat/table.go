package procstat

import (
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// Table is /proc/interrupts or /proc/softirqs: per-CPU counts by row.
type Table struct {
	// CPUs are the columns, from the header: the online CPUs for
	// /proc/interrupts, the possible ones for /proc/softirqs.
	CPUs []int
	Rows []Row
}

// Row is one line of a Table.
type Row struct {
	// Name is the row's label without its colon: an IRQ number ("24") or
	// a named row ("LOC", "RES", "NET_RX").
	Name string
	// Desc is the rest of the line after the counts: the IRQ's chip,
	// hardware IRQ and handler names ("IO-APIC 5-edge ACPI:Ged"), or what
	// a named row counts ("Local timer interrupts"); spaces are collapsed.
	Desc string
	// PerCPU is the count of each CPU the row has a column for.
	PerCPU map[int]uint64
	// Global is true for a row with one system-wide count (x86's ERR and
	// MIS), which is then Total's only part.
	Global bool
	// Partial is true when the row has fewer per-CPU columns than the
	// header (a CPU went offline while the file was read): only the
	// first ones are known.
	Partial bool
	// Total is the sum of the row's counts.
	Total uint64
}

// Row finds a row by name.
func (t Table) Row(name string) (Row, bool) {
	for _, r := range t.Rows {
		if r.Name == name {
			return r, true
		}
	}
	return Row{}, false
}

// ParseInterrupts parses /proc/interrupts.
func ParseInterrupts(b []byte) (Table, error) { return parseTable(b, "interrupts") }

// ParseSoftirqs parses /proc/softirqs.
func ParseSoftirqs(b []byte) (Table, error) { return parseTable(b, "softirqs") }

// ReadInterrupts reads /proc/interrupts from an fs.FS rooted at /.
func ReadInterrupts(fsys fs.FS) (Table, error) {
	b, err := readFile(fsys, "proc/interrupts")
	if err != nil {
		return Table{}, err
	}
	return ParseInterrupts(b)
}

// ReadSoftirqs reads /proc/softirqs from an fs.FS rooted at /.
func ReadSoftirqs(fsys fs.FS) (Table, error) {
	b, err := readFile(fsys, "proc/softirqs")
	if err != nil {
		return Table{}, err
	}
	return ParseSoftirqs(b)
}

func parseTable(b []byte, file string) (Table, error) {
	lines := strings.Split(string(b), "\n")
	var t Table
	header := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		header = i
		for _, w := range strings.Fields(l) {
			n, ok := strings.CutPrefix(w, "CPU")
			cpu, err := strconv.Atoi(n)
			if !ok || err != nil || cpu < 0 || n != strconv.Itoa(cpu) {
				return Table{}, &ParseError{File: file, Line: i + 1, Reason: "header word " + strconv.Quote(w) + " is not CPUn"}
			}
			if len(t.CPUs) > 0 && cpu <= t.CPUs[len(t.CPUs)-1] {
				return Table{}, &ParseError{File: file, Line: i + 1, Reason: "CPU" + n + " out of order"}
			}
			t.CPUs = append(t.CPUs, cpu)
		}
		break
	}
	if header < 0 {
		return Table{}, &ParseError{File: file, Reason: "empty"}
	}
	if len(t.CPUs) == 0 {
		return Table{}, &ParseError{File: file, Line: header + 1, Reason: "no CPU in the header"}
	}
	seen := map[string]bool{}
	for i := header + 1; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" {
			continue
		}
		name, rest, ok := strings.Cut(l, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return Table{}, &ParseError{File: file, Line: i + 1, Reason: "no NAME: at the start of the line"}
		}
		if seen[name] {
			return Table{}, &ParseError{File: file, Line: i + 1, Reason: "row " + strconv.Quote(name) + " twice"}
		}
		seen[name] = true
		f := strings.Fields(rest)
		var counts []uint64
		for len(counts) < len(t.CPUs) && len(counts) < len(f) {
			n, err := strconv.ParseUint(f[len(counts)], 10, 64)
			if err != nil {
				break
			}
			counts = append(counts, n)
		}
		r := Row{Name: name, Desc: strings.Join(f[len(counts):], " "), PerCPU: map[int]uint64{}}
		switch {
		case len(counts) == 1 && len(t.CPUs) > 1:
			r.Global = true
			r.Total = counts[0]
		default:
			r.Partial = len(counts) < len(t.CPUs)
			for j, n := range counts {
				r.PerCPU[t.CPUs[j]] = n
				r.Total += n
			}
		}
		t.Rows = append(t.Rows, r)
	}
	return t, nil
}

// TableDelta is what changed between two reads of a Table.
type TableDelta struct {
	// CPUs are those both reads have a column for; Gone those only the
	// first has (taken offline), Came those only the second has.
	CPUs, Gone, Came []int
	Rows             []Row
}

// Row finds a row by name.
func (d TableDelta) Row(name string) (Row, bool) { return Table{Rows: d.Rows}.Row(name) }

// DeltaTable gives after-before per row and CPU. A row only after has
// appeared (an IRQ line requested in between) and counts from 0; one whose
// description changed was freed and requested again, and also counts from
// 0. Rows only before are dropped. Counts are the kernel's unsigned int: one
// that went backwards wrapped.
func DeltaTable(before, after Table) TableDelta {
	var d TableDelta
	for _, c := range after.CPUs {
		if slices.Contains(before.CPUs, c) {
			d.CPUs = append(d.CPUs, c)
		} else {
			d.Came = append(d.Came, c)
		}
	}
	for _, c := range before.CPUs {
		if !slices.Contains(after.CPUs, c) {
			d.Gone = append(d.Gone, c)
		}
	}
	prev := map[string]Row{}
	for _, r := range before.Rows {
		prev[r.Name] = r
	}
	for _, a := range after.Rows {
		b, ok := prev[a.Name]
		fresh := !ok || b.Desc != a.Desc || b.Global != a.Global
		if fresh {
			b = Row{PerCPU: map[int]uint64{}}
		}
		r := Row{Name: a.Name, Desc: a.Desc, Global: a.Global, Partial: a.Partial || b.Partial, PerCPU: map[int]uint64{}}
		if a.Global {
			r.Total = delta32(b.Total, a.Total)
		}
		for c, n := range a.PerCPU {
			m, had := b.PerCPU[c]
			if !had && !fresh {
				// A CPU the first read had no count for (it came online,
				// or the row was partial): its counts since boot are not
				// this window's, so its delta is unknown.
				r.Partial = true
				continue
			}
			v := delta32(m, n)
			r.PerCPU[c] = v
			r.Total += v
		}
		d.Rows = append(d.Rows, r)
	}
	return d
}

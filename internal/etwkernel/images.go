package etwkernel

import "sort"

// Images maps kernel addresses to the images (drivers) loaded there, from
// the Image_Load events of the session: the rundown at its start
// (DCStart), the loads and unloads during it, the rundown at its end
// (DCEnd). Only images in the kernel's half of the address space (the
// top bit set, on x64 and arm64 alike) are kept: a DPC or ISR routine is
// kernel code, and user-mode images of different processes share bases.
// The zero value is empty and ready.
type Images struct {
	byBase map[uint64]image
	sorted []image // by base; rebuilt after a change
	dirty  bool
}

type image struct {
	base, size uint64
	name       string // BaseName of the FileName
}

// Add records one Image_Load event.
func (m *Images) Add(im *ImageLoad) {
	if im.ImageBase>>63 == 0 {
		return
	}
	if m.byBase == nil {
		m.byBase = map[uint64]image{}
	}
	if im.Kind == ImageUnloaded {
		if cur, ok := m.byBase[im.ImageBase]; ok && cur.size == im.ImageSize {
			delete(m.byBase, im.ImageBase)
			m.dirty = true
		}
		return
	}
	if im.ImageSize == 0 || im.ImageBase+im.ImageSize < im.ImageBase {
		return // empty or wrapping: no address is in it
	}
	m.byBase[im.ImageBase] = image{im.ImageBase, im.ImageSize, BaseName(im.FileName)}
	m.dirty = true
}

// Lookup is the image holding addr: its file name, or false.
func (m *Images) Lookup(addr uint64) (string, bool) {
	if m == nil {
		return "", false
	}
	if m.dirty {
		m.sorted = m.sorted[:0]
		for _, im := range m.byBase {
			m.sorted = append(m.sorted, im)
		}
		sort.Slice(m.sorted, func(i, j int) bool { return m.sorted[i].base < m.sorted[j].base })
		m.dirty = false
	}
	// The last image based at or below addr; images overlap only when
	// the events are inconsistent, and then the nearest base wins.
	i := sort.Search(len(m.sorted), func(i int) bool { return m.sorted[i].base > addr }) - 1
	if i < 0 || addr-m.sorted[i].base >= m.sorted[i].size {
		return "", false
	}
	return m.sorted[i].name, true
}

// Unmapped is the name given to a routine no image holds.
const Unmapped = "(no image)"

// nameOf is the image of a routine, or Unmapped.
func (m *Images) nameOf(routine uint64) string {
	if name, ok := m.Lookup(routine); ok {
		return name
	}
	return Unmapped
}

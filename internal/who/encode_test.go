package who

import (
	"encoding/binary"
	"unicode/utf16"
)

// Encode lays an event out as its manifest template does: the inverse of
// Decode, for the tests and fuzzing that build records from the layout.
// values gives the integer fields by the manifest's names; the string and
// the stack come from ev.
func Encode(id uint16, version uint8, pointer64 bool, values map[string]uint32, appName string, stack []uint64) ([]byte, error) {
	layout, ok := layouts[layoutKey{id, version}]
	if !ok {
		return nil, ErrNotTimerEvent
	}
	name := utf16.Encode([]rune(appName))
	var out []byte
	for _, f := range layout {
		switch f.typ {
		case u16:
			v := values[f.name]
			if f.name == "AppNameLength" {
				v = uint32(len(name))
			}
			out = binary.LittleEndian.AppendUint16(out, uint16(v))
		case u32:
			v := values[f.name]
			if f.name == "StackSize" {
				v = uint32(len(stack))
			}
			out = binary.LittleEndian.AppendUint32(out, v)
		case wstr:
			for _, u := range name {
				out = binary.LittleEndian.AppendUint16(out, u)
			}
		case ptrs:
			for _, p := range stack {
				if pointer64 {
					out = binary.LittleEndian.AppendUint64(out, p)
				} else {
					out = binary.LittleEndian.AppendUint32(out, uint32(p))
				}
			}
		}
	}
	return out, nil
}

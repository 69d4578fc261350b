package tracefs

import (
	"reflect"
	"testing"
)

func TestStats(t *testing.T) {
	s, err := ParseStats([]byte("entries: 3\noverrun: 1\ncommit overrun: 2\nbytes: 9\noldest event ts:  5.000001\nnow ts: 6.5\ndropped events: 4\nread events: 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{Entries: 3, Overrun: 1, CommitOverrun: 2, Bytes: 9, DroppedEvents: 4, ReadEvents: 7, OldestTS: "5.000001", NowTS: "6.5"}
	s.Present = nil
	if !reflect.DeepEqual(s, want) || s.Lost() != 7 {
		t.Errorf("%+v", s)
	}
	for _, bad := range []string{"", "entries: 1\n", "entries: x\noverrun: 1\n", "entries: 1\nentries: 2\noverrun: 0\n"} {
		if _, err := ParseStats([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	old, err := ParseStats([]byte("entries: 1\noverrun: 0\ncommit overrun: 0\n"))
	if err != nil || old.Present["dropped events"] {
		t.Errorf("an old kernel's stats: %+v %v", old, err)
	}
}

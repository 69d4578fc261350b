package persist_test

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/persist"
)

const testSID = "S-1-5-21-3623811015-3361044348-30300820-1013"

// The logon task names its user in LogonTrigger and in Principal, as a SID,
// with LogonTrigger's children in the schema's order (the Task Scheduler
// schema, taskschd's LogonTrigger element):
// Wine's Task Scheduler does not enforce any of this, Windows does.
func TestTaskXMLNamesTheUser(t *testing.T) {
	data, err := persist.TaskXML(persist.Task{Exe: hostilePaths[2], Args: hostileArgs, Description: persist.Marker("x"), DelaySeconds: 15, UserSID: testSID})
	if err != nil {
		t.Fatal(err)
	}
	text := decodeUTF16(t, data)
	// The children of LogonTrigger and Principal, in document order.
	children := map[string][]string{}
	dec := xml.NewDecoder(strings.NewReader(text))
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	var stack []string
	values := map[string]string{}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if n := len(stack); n > 0 && (stack[n-1] == "LogonTrigger" || stack[n-1] == "Principal") {
				children[stack[n-1]] = append(children[stack[n-1]], tok.Name.Local)
			}
			stack = append(stack, tok.Name.Local)
		case xml.CharData:
			if n := len(stack); n > 1 {
				values[stack[n-2]+">"+stack[n-1]] += string(tok)
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	if got, want := strings.Join(children["LogonTrigger"], ","), "Enabled,UserId,Delay"; got != want {
		t.Errorf("LogonTrigger's children are %s, want %s (the schema's sequence)", got, want)
	}
	if !strings.Contains(strings.Join(children["Principal"], ","), "UserId") {
		t.Errorf("Principal has no UserId: %v", children["Principal"])
	}
	for _, where := range []string{"LogonTrigger>UserId", "Principal>UserId"} {
		if values[where] != testSID {
			t.Errorf("%s = %q, want %q", where, values[where], testSID)
		}
	}
	in, err := persist.ParseTask(data)
	if err != nil {
		t.Fatal(err)
	}
	if in.LogonUserID != testSID || in.PrincipalUserID != testSID || in.Exe != hostilePaths[2] {
		t.Errorf("ParseTask read back %+v", in)
	}
}

func TestTaskXMLRefusesANonSID(t *testing.T) {
	for _, user := range []string{`DOMAIN\user`, "S-1", "S-1-5", "s-1-5-21-1", "S-1-5-21-1\n", "Administrators"} {
		if _, err := persist.TaskXML(persist.Task{Exe: `C:\t.exe`, UserSID: user}); err == nil {
			t.Errorf("TaskXML accepted the user %q", user)
		}
	}
	for _, sid := range []string{testSID, "S-1-5-18", "S-1-12-1-1-2-3-4"} {
		if !persist.ValidSID(sid) {
			t.Errorf("ValidSID(%q) = false", sid)
		}
	}
}

func TestInstalledHeldSetting(t *testing.T) {
	tests := []struct {
		args    []string
		res     uint32
		dma     int32
		dmaSet  bool
		nothing bool
	}{
		{[]string{"apply", "--ms", "1"}, 10000, 0, false, false},
		{[]string{"apply", "--ms", "0.5068"}, 5068, 0, false, false},
		{[]string{"apply", "--resolution", "5000", "--no-console"}, 5000, 0, false, false},
		{[]string{"apply", "--dma-latency", "0"}, 0, 0, true, false},
		{[]string{"apply", "--ms", "x"}, 0, 0, false, true},
		{[]string{"apply", "--ms", "-1"}, 0, 0, false, true},
		{nil, 0, 0, false, true},
	}
	for _, tt := range tests {
		got := persist.Installed{Args: tt.args}.HeldSetting()
		switch {
		case tt.nothing && !got.IsZero():
			t.Errorf("%q: HeldSetting() = %v, want none", tt.args, got)
		case got.Resolution100ns != tt.res:
			t.Errorf("%q: HeldSetting() = %v, want %d x 100ns", tt.args, got, tt.res)
		case tt.dmaSet && (got.CPUDMALatencyUs == nil || *got.CPUDMALatencyUs != tt.dma):
			t.Errorf("%q: HeldSetting() = %v, want cpu_dma_latency %d", tt.args, got, tt.dma)
		}
	}
}

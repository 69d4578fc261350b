package persist_test

import (
	"encoding/xml"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tickscope/tickscope/internal/persist"
)

// Paths that have broken other tools' tasks: spaces, &, %, non-ASCII, a
// trailing backslash in an argument, quotes in an argument.
var hostilePaths = []string{
	`C:\Program Files\tickscope\tickscope.exe`,
	`C:\Users\Zoë & Björn\100% sure\tickscope.exe`,
	`C:\Users\田中\ツール\tickscope.exe`,
	`D:\a<b>c'd\tickscope.exe`,
	`\\server\share\dir with spaces\tickscope.exe`,
}

var hostileArgs = []string{"apply", "--resolution", "5068", "--no-console", "--no-esc", `with "quotes"`, `trailing\`, `C:\dir with space\`, ""}

func decodeUTF16(t *testing.T, b []byte) string {
	t.Helper()
	if len(b) < 2 || b[0] != 0xFF || b[1] != 0xFE || len(b)%2 != 0 {
		t.Fatalf("not UTF-16LE with a byte-order mark")
	}
	u := make([]uint16, 0, len(b)/2)
	for i := 2; i < len(b); i += 2 {
		u = append(u, uint16(b[i])|uint16(b[i+1])<<8)
	}
	return string(utf16.Decode(u))
}

func TestTaskXMLRoundTripsHostilePaths(t *testing.T) {
	for _, exe := range hostilePaths {
		data, err := persist.TaskXML(persist.Task{Exe: exe, Args: hostileArgs, Description: persist.Marker("0.1.0"), DelaySeconds: 15})
		if err != nil {
			t.Fatal(err)
		}
		text := decodeUTF16(t, data)
		var doc struct {
			Description string `xml:"RegistrationInfo>Description"`
			Delay       string `xml:"Triggers>LogonTrigger>Delay"`
			LogonType   string `xml:"Principals>Principal>LogonType"`
			RunLevel    string `xml:"Principals>Principal>RunLevel"`
			Battery     bool   `xml:"Settings>DisallowStartIfOnBatteries"`
			Limit       string `xml:"Settings>ExecutionTimeLimit"`
			Command     string `xml:"Actions>Exec>Command"`
			Arguments   string `xml:"Actions>Exec>Arguments"`
		}
		// The declaration says UTF-16; the text is already decoded.
		dec := xml.NewDecoder(strings.NewReader(strings.Replace(text, `encoding="UTF-16"`, `encoding="UTF-8"`, 1)))
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("%s: the task XML is not well formed: %v", exe, err)
		}
		if doc.Command != exe {
			t.Errorf("command %q, want %q", doc.Command, exe)
		}
		if got := persist.SplitWindowsCommandLine(doc.Arguments); strings.Join(got, "\x00") != strings.Join(hostileArgs, "\x00") {
			t.Errorf("arguments %q split back to %q, want %q", doc.Arguments, got, hostileArgs)
		}
		if doc.Delay != "PT15S" || doc.LogonType != "InteractiveToken" || doc.RunLevel != "LeastPrivilege" || doc.Battery || doc.Limit != "PT0S" {
			t.Errorf("task settings %+v", doc)
		}
		if !strings.Contains(doc.Description, "[tickscope holder, build 0.1.0]") {
			t.Errorf("description %q lacks the marker", doc.Description)
		}
	}
}

func TestExpandedByTaskScheduler(t *testing.T) {
	env := map[string]string{"USERPROFILE": `C:\Users\x`}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if got := persist.ExpandedByTaskScheduler(`C:\100% sure\t.exe`, lookup); got != "" {
		t.Errorf("a lone %% was reported as expanding %q", got)
	}
	if got := persist.ExpandedByTaskScheduler(`C:\%USERPROFILE%\t.exe`, lookup); got != "USERPROFILE" {
		t.Errorf("got %q, want USERPROFILE", got)
	}
	if got := persist.ExpandedByTaskScheduler(`C:\%NOTSET%\t.exe`, lookup); got != "" {
		t.Errorf("an unset variable was reported: %q", got)
	}
}

func TestSystemdUnitQuotesEveryWord(t *testing.T) {
	unit := persist.SystemdUnit(persist.Unit{
		Exe:         "/opt/my tools/100% $HOME/tickscope",
		Args:        []string{"apply", "--dma-latency", "0", `a "quoted" \ word`},
		Description: "tickscope holder " + persist.Marker("0.1.0"),
	})
	in, err := persist.ParseUnit(unit)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/opt/my tools/100% $HOME/tickscope", "apply", "--dma-latency", "0", `a "quoted" \ word`}
	if got := append([]string{in.Exe}, in.Args...); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("ExecStart splits to %q, want %q:\n%s", got, want, unit)
	}
	if !in.Ours() {
		t.Errorf("description %q: marker not recognised", in.Description)
	}
	for _, section := range []string{"[Unit]", "[Service]", "[Install]", "WantedBy=multi-user.target", "Restart=on-failure"} {
		if !strings.Contains(unit, section) {
			t.Errorf("unit lacks %q:\n%s", section, unit)
		}
	}
}

func TestParseTaskReadsBackWhatTaskXMLWrote(t *testing.T) {
	for _, exe := range hostilePaths {
		data, err := persist.TaskXML(persist.Task{Exe: exe, Args: hostileArgs, Description: "holds 0.5 ms " + persist.Marker("0.1.0"), DelaySeconds: 15})
		if err != nil {
			t.Fatal(err)
		}
		// As written, and as the platform hands it over and reads it back:
		// decoded to a string for ITaskFolder::RegisterTask, and
		// IRegisteredTask::get_Xml's string as UTF-8 bytes under the
		// declaration that still says UTF-16.
		text, err := persist.DefinitionText(data)
		if err != nil {
			t.Fatal(err)
		}
		for form, data := range map[string][]byte{"UTF-16": data, "UTF-8": []byte(text)} {
			in, err := persist.ParseTask(data)
			if err != nil {
				t.Fatalf("%s, %s: %v", exe, form, err)
			}
			if in.Exe != exe || strings.Join(in.Args, "\x00") != strings.Join(hostileArgs, "\x00") || !in.Ours() {
				t.Errorf("%s: read back %+v for %s", form, in, exe)
			}
		}
	}
}

func TestParseTaskRejects(t *testing.T) {
	for name, data := range map[string]string{
		"not XML":      "schtasks: ERROR: The system cannot find the file specified.",
		"another root": `<?xml version="1.0"?><Job><Actions><Exec><Command>x</Command></Exec></Actions></Job>`,
		"odd UTF-16":   "\xFF\xFE<\x00T",
		"not finished": `<Task><Actions><Exec><Command>x`,
	} {
		if in, err := persist.ParseTask([]byte(data)); err == nil {
			t.Errorf("%s: parsed as %+v", name, in)
		}
	}
	// Wine's Task Scheduler drops the Exec action: the task is still read.
	if in, err := persist.ParseTask([]byte(`<Task><RegistrationInfo><Description>` + persist.Marker("1") + `</Description></RegistrationInfo><Actions><Exec/></Actions></Task>`)); err != nil || in.Exe != "" || !in.Ours() {
		t.Errorf("a task without a command: %+v, %v", in, err)
	}
	// A task someone else made is read but is not ours.
	in, err := persist.ParseTask([]byte(`<?xml version="1.0" encoding="UTF-16"?><Task xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task"><RegistrationInfo><Description>TimerResolution at logon</Description></RegistrationInfo><Actions><Exec><Command>C:\\tr.exe</Command></Exec></Actions></Task>`))
	if err != nil || in.Ours() || in.Exe != `C:\\tr.exe` {
		t.Errorf("foreign task: %+v, %v", in, err)
	}
}

// FuzzSplitWindowsCommandLine: whatever the words, WindowsCommandLine
// joins them so that they split back unchanged (words without NUL, as
// Windows has none).
func FuzzSplitWindowsCommandLine(f *testing.F) {
	f.Add("apply", `with "quotes"`, `trailing\`)
	f.Add("", `\\"`, " \t")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		words := []string{a, b, c}
		for _, w := range words {
			if strings.ContainsRune(w, 0) || !utf8.ValidString(w) {
				return
			}
		}
		if got := persist.SplitWindowsCommandLine(persist.WindowsCommandLine(words)); strings.Join(got, "\x00") != strings.Join(words, "\x00") {
			t.Errorf("%q joined as %q splits to %q", words, persist.WindowsCommandLine(words), got)
		}
	})
}

// FuzzParseTask: any input is either rejected or read without panicking,
// and a task written from the fields read back reads back the same.
func FuzzParseTask(f *testing.F) {
	data, _ := persist.TaskXML(persist.Task{Exe: hostilePaths[1], Args: hostileArgs, Description: persist.Marker("x"), DelaySeconds: 15})
	f.Add(data)
	data, _ = persist.TaskXML(persist.Task{Exe: hostilePaths[2], Args: hostileArgs, Description: persist.Marker("x"), DelaySeconds: 15, UserSID: testSID})
	f.Add(data)
	f.Add([]byte(`<Task><Actions><Exec><Command>a</Command><Arguments>"b c" d</Arguments></Exec></Actions></Task>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := persist.ParseTask(data)
		if err != nil || strings.ContainsRune(in.Exe+in.Description+strings.Join(in.Args, ""), 0) {
			return
		}
		sid := ""
		if persist.ValidSID(in.PrincipalUserID) {
			sid = in.PrincipalUserID
		}
		again, err := persist.TaskXML(persist.Task{Exe: in.Exe, Args: in.Args, Description: in.Description, UserSID: sid})
		if err != nil {
			return // text XML cannot carry (control characters)
		}
		back, err := persist.ParseTask(again)
		if err != nil {
			t.Fatalf("re-reading %+v: %v", in, err)
		}
		if back.Exe != in.Exe || strings.Join(back.Args, "\x00") != strings.Join(in.Args, "\x00") || back.PrincipalUserID != sid || back.LogonUserID != sid {
			t.Errorf("%+v read back as %+v", in, back)
		}
	})
}

// FuzzParseUnit: any input is rejected or read; a unit written from what
// was read reads back the same.
func FuzzParseUnit(f *testing.F) {
	f.Add(persist.SystemdUnit(persist.Unit{Exe: "/opt/a b/tickscope", Args: hostileArgs, Description: persist.Marker("x")}))
	f.Add("ExecStart=\"a\" \"b\"\n")
	f.Fuzz(func(t *testing.T, text string) {
		in, err := persist.ParseUnit(text)
		if err != nil {
			return
		}
		back, err := persist.ParseUnit(persist.SystemdUnit(persist.Unit{Exe: in.Exe, Args: in.Args}))
		if err != nil {
			t.Fatalf("re-reading %+v: %v", in, err)
		}
		if back.Exe != in.Exe || strings.Join(back.Args, "\x00") != strings.Join(in.Args, "\x00") {
			t.Errorf("%q read back as %q", append([]string{in.Exe}, in.Args...), append([]string{back.Exe}, back.Args...))
		}
	})
}

func TestInstalledSetting(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"apply", "--ms", "1", "--as-startup", "--no-console", "--no-esc"}, "--ms 1"},
		{[]string{"apply", "--no-console", "--resolution", "5000"}, "--resolution 5000"},
		{[]string{"apply", "--dma-latency", "0", "--as-startup"}, "--dma-latency 0"},
		{[]string{"apply", "--ms"}, "unknown"},
		{nil, "unknown"},
	}
	for _, tt := range tests {
		if got := (persist.Installed{Args: tt.args}).Setting(); got != tt.want {
			t.Errorf("Setting() of %q = %q, want %q", tt.args, got, tt.want)
		}
	}
}

// The logon task runs the GUI-subsystem build beside tickscope.exe.
func TestHolderPath(t *testing.T) {
	tests := []struct {
		exe     string
		windows bool
		want    string
	}{
		{`C:\Tools\tickscope.exe`, true, `C:\Tools\tickscope-holder.exe`},
		{`C:\Program Files\tick scope\TICKSCOPE.EXE`, true, `C:\Program Files\tick scope\tickscope-holder.exe`},
		{`C:/Tools/tickscope.exe`, true, `C:/Tools/tickscope-holder.exe`},
		{`\\server\share\tickscope.exe`, true, `\\server\share\tickscope-holder.exe`},
		{`C:\Tools\tickscope-holder.exe`, true, `C:\Tools\tickscope-holder.exe`}, // run from the holder itself
		{`tickscope.exe`, true, `tickscope-holder.exe`},
		{`/usr/local/bin/tickscope`, false, `/usr/local/bin/tickscope`}, // systemd opens no terminal
	}
	for _, tt := range tests {
		if got := persist.HolderPath(tt.exe, tt.windows); got != tt.want {
			t.Errorf("HolderPath(%q, %v) = %q, want %q", tt.exe, tt.windows, got, tt.want)
		}
	}
}

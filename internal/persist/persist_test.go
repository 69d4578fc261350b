package persist_test

import (
	"encoding/xml"
	"strings"
	"testing"
	"unicode/utf16"

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
		if got := commandLineToArgv(doc.Arguments); strings.Join(got, "\x00") != strings.Join(hostileArgs, "\x00") {
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

// commandLineToArgv splits as CommandLineToArgvW does for arguments after
// the program name (the documented rules on backslashes and quotes).
func commandLineToArgv(s string) []string {
	var args []string
	var cur strings.Builder
	inQuotes, have := false, false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			n := 0
			for i < len(s) && s[i] == '\\' {
				n++
				i++
			}
			if i < len(s) && s[i] == '"' {
				cur.WriteString(strings.Repeat(`\`, n/2))
				if n%2 == 1 {
					cur.WriteByte('"')
					i++
				}
			} else {
				cur.WriteString(strings.Repeat(`\`, n))
			}
			have = true
			continue
		case c == '"':
			inQuotes = !inQuotes
			have = true
		case (c == ' ' || c == '\t') && !inQuotes:
			if have {
				args = append(args, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
		i++
	}
	if have {
		args = append(args, cur.String())
	}
	return args
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
	var exec string
	for _, line := range strings.Split(unit, "\n") {
		if rest, ok := strings.CutPrefix(line, "ExecStart="); ok {
			exec = rest
		}
	}
	want := []string{"/opt/my tools/100% $HOME/tickscope", "apply", "--dma-latency", "0", `a "quoted" \ word`}
	if got := splitSystemd(exec); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("ExecStart %q splits to %q, want %q", exec, got, want)
	}
	for _, section := range []string{"[Unit]", "[Service]", "[Install]", "WantedBy=multi-user.target", "Restart=on-failure"} {
		if !strings.Contains(unit, section) {
			t.Errorf("unit lacks %q:\n%s", section, unit)
		}
	}
}

// splitSystemd undoes systemdQuote: double-quoted words with \\ \" \n \t
// escapes, %% and $$ for literal % and $.
func splitSystemd(s string) []string {
	var words []string
	for len(s) > 0 {
		s = strings.TrimLeft(s, " ")
		if s == "" || s[0] != '"' {
			break
		}
		var w strings.Builder
		i := 1
		for ; i < len(s) && s[i] != '"'; i++ {
			switch {
			case s[i] == '\\' && i+1 < len(s):
				i++
				switch s[i] {
				case 'n':
					w.WriteByte('\n')
				case 't':
					w.WriteByte('\t')
				default:
					w.WriteByte(s[i])
				}
			case (s[i] == '%' || s[i] == '$') && i+1 < len(s) && s[i+1] == s[i]:
				w.WriteByte(s[i])
				i++
			default:
				w.WriteByte(s[i])
			}
		}
		words = append(words, w.String())
		s = s[min(i+1, len(s)):]
	}
	return words
}

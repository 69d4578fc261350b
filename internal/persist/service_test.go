package persist_test

import (
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/persist"
)

// The boot service's definition: what it runs, as whom, when, and with
// which privileges, for hostile paths; its text reads back to the same
// words.
func TestBootServiceDefinition(t *testing.T) {
	args := []string{"apply", "--resolution", "5000", "--no-esc", "--as-service"}
	for _, exe := range hostilePaths {
		s := persist.BootService(exe, args, "Holds 0.5 ms "+persist.Marker("0.1.0"))
		text := persist.ServiceText(s)
		for _, line := range []string{
			"SERVICE_NAME        : tickscope\n",
			"TYPE                : WIN32_OWN_PROCESS\n",
			"START_TYPE          : AUTO_START\n",
			"ERROR_CONTROL       : NORMAL\n",
			"DISPLAY_NAME        : tickscope timer holder\n",
			`SERVICE_START_NAME  : NT AUTHORITY\LocalService` + "\n",
			"REQUIRED_PRIVILEGES : SeChangeNotifyPrivilege\n",
		} {
			if !strings.Contains(text, line) {
				t.Errorf("%s: the definition lacks %q:\n%s", exe, line, text)
			}
		}
		// A path with a space is quoted, or the service manager would try
		// C:\Program.exe first.
		if strings.Contains(exe, " ") && !strings.HasPrefix(s.CommandLine, `"`+exe+`" `) {
			t.Errorf("the command line %q does not quote %q", s.CommandLine, exe)
		}
		if !persist.IsServiceText(text) {
			t.Errorf("IsServiceText(%q) = false", text)
		}
		back, err := persist.ParseService(text)
		if err != nil {
			t.Fatalf("%s: %v\n%s", exe, err, text)
		}
		in := back.Installed()
		if in.Exe != exe || strings.Join(in.Args, "\x00") != strings.Join(args, "\x00") {
			t.Errorf("read back %q %q, want %q %q", in.Exe, in.Args, exe, args)
		}
		if !in.Ours() || in.Setting() != "--resolution 5000" {
			t.Errorf("read back %+v: ours %v, setting %q", in, in.Ours(), in.Setting())
		}
		if back.Account != persist.ServiceAccount || back.StartType != persist.SERVICE_AUTO_START || back.Type != persist.SERVICE_WIN32_OWN_PROCESS ||
			strings.Join(back.Privileges, ",") != "SeChangeNotifyPrivilege" {
			t.Errorf("read back %+v", back)
		}
	}
}

// What the platform reads back from a service manager: another's service
// (a driver, an interactive process, a description over several lines), and
// a manager that keeps no privilege list (Wine's).
func TestServiceTextOfForeignServices(t *testing.T) {
	for _, s := range []persist.Service{
		{Name: "tickscope", Type: persist.SERVICE_KERNEL_DRIVER, StartType: persist.SERVICE_SYSTEM_START, ErrorControl: persist.SERVICE_ERROR_CRITICAL,
			CommandLine: `\SystemRoot\System32\drivers\tick.sys`, Account: "", Description: "a driver\r\nover lines", Privileges: []string{}},
		{Name: "tickscope", Type: persist.SERVICE_WIN32_OWN_PROCESS | persist.SERVICE_INTERACTIVE_PROCESS, StartType: persist.SERVICE_DEMAND_START,
			CommandLine: `C:\tools\TimerResolution.exe --resolution 5000`, Account: "LocalSystem", Description: "TimerResolution : a service", Privileges: nil},
		{Name: "tickscope", Type: 0xdead, StartType: 77, ErrorControl: 9, CommandLine: "", Privileges: []string{"SeA", "SeB"}},
	} {
		text := persist.ServiceText(s)
		if n := strings.Count(text, "\n"); n != 9 {
			t.Errorf("%d lines, want 9:\n%s", n, text)
		}
		back, err := persist.ParseService(text)
		if err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		want := s
		want.Description = strings.NewReplacer("\r", " ", "\n", " ").Replace(s.Description)
		if back.Name != want.Name || back.Type != want.Type || back.StartType != want.StartType || back.ErrorControl != want.ErrorControl ||
			back.CommandLine != want.CommandLine || back.Account != want.Account || back.Description != want.Description ||
			(back.Privileges == nil) != (want.Privileges == nil) || strings.Join(back.Privileges, ",") != strings.Join(want.Privileges, ",") {
			t.Errorf("read back %+v, want %+v", back, want)
		}
		if back.Installed().Ours() {
			t.Errorf("a foreign service reads as tickscope's: %+v", back)
		}
	}
}

func TestParseServiceRejects(t *testing.T) {
	good := persist.ServiceText(persist.BootService(`C:\t.exe`, []string{"apply"}, "x"))
	for _, bad := range []struct{ name, text string }{
		{"empty", ""},
		{"a key missing", strings.Replace(good, "DISPLAY_NAME        : tickscope timer holder\n", "", 1)},
		{"a key twice", good + "TYPE                : WIN32_OWN_PROCESS\n"},
		{"an unknown key", good + "FAILURE_ACTIONS     : RESTART\n"},
		{"no separator", good + "junk\n"},
		{"an unknown start type", strings.Replace(good, "AUTO_START", "SOMETIMES", 1)},
		{"no name", strings.Replace(good, "SERVICE_NAME        : tickscope", "SERVICE_NAME        : ", 1)},
	} {
		if _, err := persist.ParseService(bad.text); err == nil {
			t.Errorf("%s: ParseService accepted\n%s", bad.name, bad.text)
		}
	}
}

func FuzzParseService(f *testing.F) {
	f.Add(persist.ServiceText(persist.BootService(`C:\Program Files\tickscope\tickscope.exe`, []string{"apply", "--ms", "1"}, "x "+persist.Marker("1"))))
	f.Add("SERVICE_NAME : x\n")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := persist.ParseService(text)
		if err != nil {
			return
		}
		// What parses, written again, parses to the same.
		again, err := persist.ParseService(persist.ServiceText(s))
		if err != nil {
			t.Fatalf("ServiceText of a parsed definition does not parse: %v", err)
		}
		if persist.ServiceText(again) != persist.ServiceText(s) {
			t.Fatalf("not stable:\n%s\n%s", persist.ServiceText(s), persist.ServiceText(again))
		}
	})
}

// The built-in service accounts take an empty-string password; any other
// account's is its own.
func TestBuiltInAccount(t *testing.T) {
	for account, want := range map[string]bool{
		persist.ServiceAccount:        true,
		`NT AUTHORITY\localservice`:   true,
		`NT AUTHORITY\NetworkService`: true,
		"LocalSystem":                 true,
		`.\LocalSystem`:               true,
		`.\alice`:                     false,
		`NT SERVICE\tickscope`:        false,
		"":                            false,
		`NT AUTHORITY\LocalServiceX`:  false,
	} {
		if got := persist.BuiltInAccount(account); got != want {
			t.Errorf("BuiltInAccount(%q) = %v, want %v", account, got, want)
		}
	}
}

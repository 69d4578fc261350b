// Package persist generates, as data, what keeps a setting across reboots:
// the Task Scheduler task that starts the holder at logon and the service
// that holds from boot (Windows), and the systemd unit that runs it at boot
// (Linux). Generating is pure and tested
// here with hostile paths; registering the result is the hold command's
// job, and only that command writes anything.
package persist

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf16"
)

// HolderExeName is the windowless holder's file name on Windows: the same
// program as tickscope.exe, linked for the GUI subsystem (-H=windowsgui)
// and shipped beside it in the release archive. Windows makes a console,
// and so a window, for a console program it starts with none to inherit,
// as Task Scheduler does at logon, and the window shows until the program
// calls FreeConsole: a console holder would flash a window at every
// logon. A GUI-subsystem program gets no console at all ("Creation of a
// Console", Microsoft Learn; "/SUBSYSTEM", link.exe's documentation).
const HolderExeName = "tickscope-holder.exe"

// HolderPath is the executable the startup holder of the tickscope at exe
// runs: on Windows the windowless build in exe's directory, elsewhere exe
// itself (systemd starts a unit with no terminal to open). exe is split
// on either slash so that Windows paths are handled the same on every OS.
func HolderPath(exe string, windows bool) string {
	if !windows {
		return exe
	}
	return exe[:strings.LastIndexAny(exe, `\/`)+1] + HolderExeName
}

// TaskName is the Task Scheduler task tickscope owns.
const TaskName = "tickscope"

// Marker goes into the task's description: a task without it was not made
// by tickscope and is never replaced or deleted by it.
func Marker(version string) string { return "[tickscope holder, build " + version + "]" }

// Task is a logon holder.
type Task struct {
	Exe         string
	Args        []string
	Description string
	// DelaySeconds is how long after logon the holder starts.
	DelaySeconds int
	// UserSID is the SID of the user the task belongs to, in its string
	// form (S-1-5-21-...): the token user of the process that registers it.
	// It names the user whose logon starts the task and the account it runs
	// as. Without it a logon trigger fires at every user's logon, and the
	// Task Scheduler protocol refuses such a registration from a
	// non-administrator (MS-TSCH; "LogonTrigger Element", "UserId
	// (logonTriggerType) Element", Microsoft Learn). Empty writes neither
	// element: only the in-memory fakes of the tests have no user.
	UserSID string
}

// The task definition, as Task Scheduler's schema (version 1.2) names it.
type taskXML struct {
	XMLName     xml.Name  `xml:"Task"`
	Version     string    `xml:"version,attr"`
	Xmlns       string    `xml:"xmlns,attr"`
	Description string    `xml:"RegistrationInfo>Description"`
	Logon       logon     `xml:"Triggers>LogonTrigger"`
	Principal   principal `xml:"Principals>Principal"`
	Settings    settings  `xml:"Settings"`
	Actions     actions   `xml:"Actions"`
}

type actions struct {
	Context   string `xml:"Context,attr"`
	Command   string `xml:"Exec>Command"`
	Arguments string `xml:"Exec>Arguments,omitempty"`
}

// logon is a LogonTrigger. Its schema (logonTriggerType, an extension of
// triggerBaseType) is a sequence: Enabled, StartBoundary, EndBoundary,
// Repetition, ExecutionTimeLimit, then UserId and Delay, in that order
// ("logonTriggerType Complex Type", "triggerBaseType Complex Type",
// Microsoft Learn). encoding/xml writes fields in their order here.
type logon struct {
	Enabled bool   `xml:"Enabled"`
	UserID  string `xml:"UserId,omitempty"`
	Delay   string `xml:"Delay"`
}

// principal is a Principal; its schema (principalType) is an xs:all, so
// its children may come in any order ("principalType Complex Type",
// Microsoft Learn).
type principal struct {
	ID        string `xml:"id,attr"`
	UserID    string `xml:"UserId,omitempty"`
	LogonType string `xml:"LogonType"`
	RunLevel  string `xml:"RunLevel"`
}

type settings struct {
	MultipleInstancesPolicy    string `xml:"MultipleInstancesPolicy"`
	DisallowStartIfOnBatteries bool   `xml:"DisallowStartIfOnBatteries"`
	StopIfGoingOnBatteries     bool   `xml:"StopIfGoingOnBatteries"`
	// PT0S: no time limit (the default of 72 hours would end the holder).
	ExecutionTimeLimit string `xml:"ExecutionTimeLimit"`
	Priority           int    `xml:"Priority"`
}

// TaskXML is the task's definition in Task Scheduler's XML, what
// ITaskFolder::RegisterTask registers (and `schtasks /Create /XML` reads
// from a file), UTF-16 with a byte-order mark as Task Scheduler writes its
// own: run as UserSID, at UserSID's logon only, without elevation,
// DelaySeconds after logon, allowed on battery, with no time limit.
// encoding/xml escapes whatever the path holds.
func TaskXML(t Task) ([]byte, error) {
	if t.UserSID != "" && !ValidSID(t.UserSID) {
		return nil, fmt.Errorf("the task's user %q is not a SID in its string form (S-1-5-...)", t.UserSID)
	}
	doc := taskXML{
		Version:     "1.2",
		Xmlns:       "http://schemas.microsoft.com/windows/2004/02/mit/task",
		Description: t.Description,
		Logon:       logon{Enabled: true, UserID: t.UserSID, Delay: fmt.Sprintf("PT%dS", t.DelaySeconds)},
		Principal:   principal{ID: "Author", UserID: t.UserSID, LogonType: "InteractiveToken", RunLevel: "LeastPrivilege"},
		Settings: settings{
			MultipleInstancesPolicy: "IgnoreNew",
			ExecutionTimeLimit:      "PT0S",
			Priority:                7,
		},
		Actions: actions{Context: "Author", Command: t.Exe, Arguments: WindowsCommandLine(t.Args)},
	}
	body, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	text := `<?xml version="1.0" encoding="UTF-16"?>` + "\r\n" + strings.ReplaceAll(string(body), "\n", "\r\n")
	var out bytes.Buffer
	out.Write([]byte{0xFF, 0xFE})
	for _, u := range utf16.Encode([]rune(text)) {
		out.WriteByte(byte(u))
		out.WriteByte(byte(u >> 8))
	}
	return out.Bytes(), nil
}

// WindowsCommandLine joins arguments so that CommandLineToArgvW (and the
// C runtime) splits them back unchanged.
func WindowsCommandLine(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = quoteWindowsArg(a)
	}
	return strings.Join(quoted, " ")
}

func quoteWindowsArg(a string) string {
	if a != "" && !strings.ContainsAny(a, " \t\n\v\"") {
		return a
	}
	var b strings.Builder
	b.WriteByte('"')
	slashes := 0
	for _, r := range a {
		switch r {
		case '\\':
			slashes++
		case '"':
			// Backslashes before a quote are doubled (those already
			// written once more), and the quote escaped.
			b.WriteString(strings.Repeat(`\`, slashes+1))
			b.WriteRune(r)
			slashes = 0
			continue
		default:
			slashes = 0
		}
		b.WriteRune(r)
	}
	// Backslashes before the closing quote are doubled too.
	b.WriteString(strings.Repeat(`\`, slashes))
	b.WriteByte('"')
	return b.String()
}

var envReference = regexp.MustCompile(`%([^%]+)%`)

// sidForm is a SID's string form: S, revision 1, an identifier authority
// and up to 15 sub-authorities ("SID Components", "ConvertSidToStringSidW
// function", Microsoft Learn).
var sidForm = regexp.MustCompile(`^S-1-[0-9]+(-[0-9]+){1,15}$`)

// ValidSID reports whether s is a SID in its string form.
func ValidSID(s string) bool { return sidForm.MatchString(s) }

// ExpandedByTaskScheduler names an environment variable that Task Scheduler
// would expand inside path (it expands %NAME% in a task's command when NAME
// is set), or "" when the path goes through intact. lookup is os.LookupEnv.
func ExpandedByTaskScheduler(path string, lookup func(string) (string, bool)) string {
	for _, m := range envReference.FindAllStringSubmatch(path, -1) {
		if _, ok := lookup(m[1]); ok {
			return m[1]
		}
	}
	return ""
}

// Unit is a systemd holder.
type Unit struct {
	Exe         string
	Args        []string
	Description string
}

// UnitName is the systemd unit tickscope owns.
const UnitName = "tickscope-holder.service"

// SystemdUnit is the unit file: a service started at boot that runs the
// holder and restarts it if it fails.
func SystemdUnit(u Unit) string {
	words := []string{systemdQuote(u.Exe)}
	for _, a := range u.Args {
		words = append(words, systemdQuote(a))
	}
	return "[Unit]\n" +
		"Description=" + strings.NewReplacer("\n", " ", "%", "%%").Replace(u.Description) + "\n" +
		"\n[Service]\n" +
		"Type=simple\n" +
		"ExecStart=" + strings.Join(words, " ") + "\n" +
		"Restart=on-failure\n" +
		"\n[Install]\n" +
		"WantedBy=multi-user.target\n"
}

// systemdQuote makes one ExecStart word: double-quoted with C escapes, and
// systemd's % specifiers and $ expansions doubled so they stay literal.
func systemdQuote(a string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "$", "$$", "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(a) + `"`
}

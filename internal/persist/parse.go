package persist

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Installed is a holder definition read back from the OS: what `status`
// shows and what `apply --persist` and `startup remove` check before they
// replace or delete anything.
type Installed struct {
	Exe         string
	Args        []string
	Description string
	// LogonUserID and PrincipalUserID are a task's LogonTrigger's and
	// Principal's UserId ("" when absent, and for units).
	LogonUserID, PrincipalUserID string
}

// Ours reports whether the definition carries tickscope's marker (of any
// build): only such a definition is replaced or deleted.
func (in Installed) Ours() bool { return strings.Contains(in.Description, "[tickscope holder, build ") }

// Setting is the setting the holder's arguments hold, as typed ("--ms 1",
// "--dma-latency 0"), or "unknown" when they name none (Wine's Task
// Scheduler, for one, keeps no arguments).
func (in Installed) Setting() string {
	for i := 0; i+1 < len(in.Args); i++ {
		switch in.Args[i] {
		case "--resolution", "--ms", "--dma-latency":
			return in.Args[i] + " " + in.Args[i+1]
		}
	}
	return "unknown"
}

// While is the programs the holder holds its setting for (its --while),
// nil when it holds it throughout.
func (in Installed) While() []string {
	for i := 0; i+1 < len(in.Args); i++ {
		if in.Args[i] == "--while" {
			return strings.Split(in.Args[i+1], ",")
		}
	}
	return nil
}

// HeldSetting is the setting the holder's arguments hold, as a Setting
// (the zero Setting when they name none or name it unreadably): what
// startup remove compares the timer with afterwards.
func (in Installed) HeldSetting() timerinfo.Setting {
	for i := 0; i+1 < len(in.Args); i++ {
		value := in.Args[i+1]
		switch in.Args[i] {
		case "--resolution":
			if v, err := strconv.ParseUint(value, 10, 32); err == nil {
				return timerinfo.Setting{Resolution100ns: uint32(v)}
			}
		case "--ms":
			if v, err := strconv.ParseFloat(value, 64); err == nil && v > 0 && v*10000 < math.MaxUint32 {
				return timerinfo.Setting{Resolution100ns: uint32(math.Round(v * 10000))}
			}
		case "--dma-latency":
			if v, err := strconv.ParseInt(value, 10, 32); err == nil {
				us := int32(v)
				return timerinfo.Setting{CPUDMALatencyUs: &us}
			}
		}
	}
	return timerinfo.Setting{}
}

// ParseTask reads a task definition as IRegisteredTask::get_Xml returns it
// (the platform passes it on as UTF-8) or TaskXML writes it: UTF-16 with a
// byte-order mark, or UTF-8. It takes the
// first Exec action; Exe is "" when there is none.
func ParseTask(data []byte) (Installed, error) {
	text, err := decodeText(data)
	if err != nil {
		return Installed{}, err
	}
	var doc struct {
		XMLName     xml.Name
		Description string   `xml:"RegistrationInfo>Description"`
		LogonUsers  []string `xml:"Triggers>LogonTrigger>UserId"`
		Principals  []string `xml:"Principals>Principal>UserId"`
		Commands    []string `xml:"Actions>Exec>Command"`
		Arguments   []string `xml:"Actions>Exec>Arguments"`
	}
	dec := xml.NewDecoder(strings.NewReader(text))
	// The text is decoded already, whatever the declaration says.
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	if err := dec.Decode(&doc); err != nil {
		return Installed{}, fmt.Errorf("the task definition is not well-formed XML: %w", err)
	}
	if doc.XMLName.Local != "Task" {
		return Installed{}, fmt.Errorf("the task definition's root element is <%s>, not <Task>", doc.XMLName.Local)
	}
	// A task without an Exec action is read with an empty Exe: whose it is
	// is still told by its description.
	in := Installed{Description: doc.Description}
	if len(doc.LogonUsers) > 0 {
		in.LogonUserID = doc.LogonUsers[0]
	}
	if len(doc.Principals) > 0 {
		in.PrincipalUserID = doc.Principals[0]
	}
	if len(doc.Commands) > 0 {
		in.Exe = doc.Commands[0]
	}
	if len(doc.Arguments) > 0 {
		in.Args = SplitWindowsCommandLine(doc.Arguments[0])
	}
	return in, nil
}

// DefinitionText is a definition as text: TaskXML's UTF-16 decoded, a unit as
// it is.
func DefinitionText(data []byte) (string, error) { return decodeText(data) }

// decodeText turns UTF-16LE (with its byte-order mark) or UTF-8 into a
// string.
func decodeText(data []byte) (string, error) {
	if len(data) >= 2 && data[0] == 0xFF && data[1] == 0xFE {
		if len(data)%2 != 0 {
			return "", errors.New("the task definition is UTF-16 with an odd number of bytes")
		}
		u := make([]uint16, 0, len(data)/2-1)
		for i := 2; i < len(data); i += 2 {
			u = append(u, uint16(data[i])|uint16(data[i+1])<<8)
		}
		return string(utf16.Decode(u)), nil
	}
	return string(bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))), nil
}

// SplitWindowsCommandLine splits arguments (what follows the program name)
// as CommandLineToArgvW and the C runtime do: whitespace separates words
// outside double quotes; 2n backslashes before a quote are n backslashes and
// the quote toggles quoting, 2n+1 are n and a literal quote; other
// backslashes are literal. It undoes WindowsCommandLine.
func SplitWindowsCommandLine(s string) []string {
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
		case (c == ' ' || c == '\t' || c == '\n' || c == '\v') && !inQuotes:
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

// ParseUnit reads back a unit SystemdUnit wrote: its Description and the
// words of its ExecStart.
func ParseUnit(text string) (Installed, error) {
	var in Installed
	found := false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "Description="); ok {
			in.Description = strings.ReplaceAll(rest, "%%", "%")
		}
		if rest, ok := strings.CutPrefix(line, "ExecStart="); ok {
			words, err := splitSystemdWords(rest)
			if err != nil {
				return Installed{}, err
			}
			if len(words) == 0 {
				return Installed{}, errors.New("the unit's ExecStart is empty")
			}
			in.Exe, in.Args, found = words[0], words[1:], true
		}
	}
	if err := sc.Err(); err != nil {
		return Installed{}, err
	}
	if !found {
		return Installed{}, errors.New("the unit has no ExecStart line")
	}
	return in, nil
}

// splitSystemdWords undoes systemdQuote: double-quoted words with \\ \" \n
// \t escapes, and %% and $$ for a literal % and $.
func splitSystemdWords(s string) ([]string, error) {
	var words []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return words, nil
		}
		if s[0] != '"' {
			return nil, fmt.Errorf("ExecStart word %q is not quoted as tickscope writes it", s)
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
		if i >= len(s) {
			return nil, errors.New("ExecStart has an unterminated quote")
		}
		words = append(words, w.String())
		s = s[i+1:]
	}
}

// ParseDefinition reads a startup definition: a task's XML (UTF-16 or
// UTF-8), a service's lines (ServiceText) or a systemd unit. A
// definition no parser reads is not tickscope's.
func ParseDefinition(data []byte) (Installed, error) {
	text, err := DefinitionText(data)
	if err != nil {
		return Installed{}, err
	}
	switch {
	case strings.HasPrefix(strings.TrimSpace(text), "<"):
		return ParseTask(data)
	case IsServiceText(text):
		s, err := ParseService(text)
		if err != nil {
			return Installed{}, err
		}
		return s.Installed(), nil
	}
	return ParseUnit(text)
}

package persist

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ServiceName is the Windows service tickscope owns (apply --persist
// --boot): the holder that starts with the machine, before anyone logs on.
const ServiceName = "tickscope"

// ServiceDisplayName is its name in the Services console.
const ServiceDisplayName = "tickscope timer holder"

// ServiceAccount is the account the service runs as. A timer request needs
// no privilege (NtSetTimerResolution and timeBeginPeriod serve any
// process), so the service runs as the least of the built-in service
// accounts: LocalService has a standard user's rights on the machine and
// anonymous credentials on the network, and no password to manage
// ("LocalService Account", Microsoft Learn). LocalSystem would hold the
// whole machine, and NetworkService presents the machine's credentials to
// the network, neither of which a holder uses.
const ServiceAccount = `NT AUTHORITY\LocalService`

// BuiltInAccount reports whether account is one of the service manager's
// built-in accounts, LocalService, NetworkService or LocalSystem, which
// have no password: CreateServiceW and ChangeServiceConfigW ask for an
// empty string as their password, where ChangeServiceConfigW's NULL means
// "leave the password as it is" ("ChangeServiceConfigW function",
// "CreateServiceW function", Microsoft Learn: lpPassword). Names compare
// without case, as the service manager's do.
func BuiltInAccount(account string) bool {
	switch strings.ToLower(account) {
	case `nt authority\localservice`, `nt authority\networkservice`, "localsystem", `.\localsystem`:
		return true
	}
	return false
}

// ServicePrivileges are the only privileges the service's token keeps
// (SERVICE_CONFIG_REQUIRED_PRIVILEGES_INFO; "SERVICE_REQUIRED_PRIVILEGES_INFOW
// structure", Microsoft Learn): the service manager removes the rest of
// LocalService's (SeImpersonatePrivilege among them, the usual step from a
// service account to SYSTEM). SeChangeNotifyPrivilege is the one every token
// keeps whatever the list says.
var ServicePrivileges = []string{"SeChangeNotifyPrivilege"}

// The values of a service's type, start type and error control, as
// winsvc.h names them ("CreateServiceW function", Microsoft Learn).
const (
	SERVICE_KERNEL_DRIVER       = 0x1
	SERVICE_FILE_SYSTEM_DRIVER  = 0x2
	SERVICE_WIN32_OWN_PROCESS   = 0x10
	SERVICE_WIN32_SHARE_PROCESS = 0x20
	SERVICE_INTERACTIVE_PROCESS = 0x100

	SERVICE_BOOT_START   = 0
	SERVICE_SYSTEM_START = 1
	SERVICE_AUTO_START   = 2
	SERVICE_DEMAND_START = 3
	SERVICE_DISABLED     = 4

	SERVICE_ERROR_IGNORE   = 0
	SERVICE_ERROR_NORMAL   = 1
	SERVICE_ERROR_SEVERE   = 2
	SERVICE_ERROR_CRITICAL = 3
)

// Service is a Windows service's definition as the service manager holds
// it: what apply --persist --boot installs, and what the platform reads
// back from the service manager for status and startup remove.
type Service struct {
	Name         string
	Type         uint32
	StartType    uint32
	ErrorControl uint32
	// CommandLine is the service's BINARY_PATH_NAME: the quoted executable
	// and its arguments, as CreateProcess splits them.
	CommandLine string
	DisplayName string
	// Account is the account it runs as (SERVICE_START_NAME).
	Account     string
	Description string
	// Privileges are the required privileges its token keeps; nil when the
	// service manager cannot say (Wine's knows no such list), empty when
	// none are listed.
	Privileges []string
}

// BootService is the service apply --persist --boot installs: exe with
// args, its own process, started automatically at boot, as ServiceAccount
// with only ServicePrivileges. The executable is quoted whenever its path
// holds a space, so that the service manager cannot read C:\Program as
// the program ("unquoted service path").
func BootService(exe string, args []string, description string) Service {
	return Service{
		Name:         ServiceName,
		Type:         SERVICE_WIN32_OWN_PROCESS,
		StartType:    SERVICE_AUTO_START,
		ErrorControl: SERVICE_ERROR_NORMAL,
		CommandLine:  WindowsCommandLine(append([]string{exe}, args...)),
		DisplayName:  ServiceDisplayName,
		Account:      ServiceAccount,
		Description:  description,
		Privileges:   append([]string{}, ServicePrivileges...),
	}
}

// Words are the executable and arguments of the command line, as
// CommandLineToArgvW splits them.
func (s Service) Words() (exe string, args []string) {
	words := SplitWindowsCommandLine(s.CommandLine)
	if len(words) == 0 {
		return "", nil
	}
	return words[0], words[1:]
}

// Installed is the service as status and startup remove read it.
func (s Service) Installed() Installed {
	exe, args := s.Words()
	return Installed{Exe: exe, Args: args, Description: s.Description}
}

// The definition's lines, in the order and with the names of `sc qc`
// (and `sc qdescription`, `sc qprivs`), so that what --dry-run prints is
// what an administrator sees from sc afterwards.
const (
	keyName        = "SERVICE_NAME"
	keyType        = "TYPE"
	keyStart       = "START_TYPE"
	keyError       = "ERROR_CONTROL"
	keyCommandLine = "BINARY_PATH_NAME"
	keyDisplayName = "DISPLAY_NAME"
	keyAccount     = "SERVICE_START_NAME"
	keyDescription = "DESCRIPTION"
	keyPrivileges  = "REQUIRED_PRIVILEGES"
)

var serviceKeys = []string{keyName, keyType, keyStart, keyError, keyCommandLine, keyDisplayName, keyAccount, keyDescription, keyPrivileges}

var typeNames = map[uint32]string{
	SERVICE_KERNEL_DRIVER:       "KERNEL_DRIVER",
	SERVICE_FILE_SYSTEM_DRIVER:  "FILE_SYSTEM_DRIVER",
	SERVICE_WIN32_OWN_PROCESS:   "WIN32_OWN_PROCESS",
	SERVICE_WIN32_SHARE_PROCESS: "WIN32_SHARE_PROCESS",
}

var startNames = map[uint32]string{
	SERVICE_BOOT_START:   "BOOT_START",
	SERVICE_SYSTEM_START: "SYSTEM_START",
	SERVICE_AUTO_START:   "AUTO_START",
	SERVICE_DEMAND_START: "DEMAND_START",
	SERVICE_DISABLED:     "DISABLED",
}

var errorNames = map[uint32]string{
	SERVICE_ERROR_IGNORE:   "IGNORE",
	SERVICE_ERROR_NORMAL:   "NORMAL",
	SERVICE_ERROR_SEVERE:   "SEVERE",
	SERVICE_ERROR_CRITICAL: "CRITICAL",
}

// name is a value's documented name, or its number in hexadecimal (a
// foreign service may combine flags, such as an interactive process).
func name(names map[uint32]string, v uint32) string {
	if n, ok := names[v]; ok {
		return n
	}
	return "0x" + strconv.FormatUint(uint64(v), 16)
}

func value(names map[uint32]string, key, text string) (uint32, error) {
	for v, n := range names {
		if n == text {
			return v, nil
		}
	}
	if hex, ok := strings.CutPrefix(text, "0x"); ok {
		if v, err := strconv.ParseUint(hex, 16, 32); err == nil {
			return uint32(v), nil
		}
	}
	return 0, fmt.Errorf("the service definition's %s %q is not a value tickscope knows", key, text)
}

// oneLine keeps a value on its line: the service manager holds any text
// (a foreign service's description may span lines), and a line break
// would start a key of its own.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// ServiceText is the definition as text: one `KEY : value` line each, as
// `sc qc` prints them. ParseService reads it back.
func ServiceText(s Service) string {
	privileges := "(unknown: the service manager keeps no list)"
	if s.Privileges != nil {
		privileges = strings.Join(s.Privileges, ", ")
	}
	values := map[string]string{
		keyName:        s.Name,
		keyType:        name(typeNames, s.Type),
		keyStart:       name(startNames, s.StartType),
		keyError:       name(errorNames, s.ErrorControl),
		keyCommandLine: s.CommandLine,
		keyDisplayName: s.DisplayName,
		keyAccount:     s.Account,
		keyDescription: s.Description,
		keyPrivileges:  privileges,
	}
	var b strings.Builder
	for _, key := range serviceKeys {
		fmt.Fprintf(&b, "%-19s : %s\n", key, oneLine(values[key]))
	}
	return b.String()
}

// IsServiceText reports whether a definition is a service's (ServiceText)
// rather than a task's XML or a systemd unit.
func IsServiceText(text string) bool { return strings.HasPrefix(text, keyName+" ") }

// ParseService reads back what ServiceText wrote. Every key must be there
// once; a line of another form is refused.
func ParseService(text string) (Service, error) {
	var s Service
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		key, val, ok := strings.Cut(line, " : ")
		key = strings.TrimRight(key, " ")
		if !ok || !known(key) {
			return Service{}, fmt.Errorf("the service definition's line %q is not KEY : value with a key of sc qc's", line)
		}
		if seen[key] {
			return Service{}, fmt.Errorf("the service definition gives %s twice", key)
		}
		seen[key] = true
		var err error
		switch key {
		case keyName:
			s.Name = val
		case keyType:
			s.Type, err = value(typeNames, key, val)
		case keyStart:
			s.StartType, err = value(startNames, key, val)
		case keyError:
			s.ErrorControl, err = value(errorNames, key, val)
		case keyCommandLine:
			s.CommandLine = val
		case keyDisplayName:
			s.DisplayName = val
		case keyAccount:
			s.Account = val
		case keyDescription:
			s.Description = val
		case keyPrivileges:
			s.Privileges = []string{}
			if strings.HasPrefix(val, "(unknown") {
				s.Privileges = nil
			} else if val != "" {
				s.Privileges = strings.Split(val, ", ")
			}
		}
		if err != nil {
			return Service{}, err
		}
	}
	if err := sc.Err(); err != nil {
		return Service{}, err
	}
	for _, key := range serviceKeys {
		if !seen[key] {
			return Service{}, fmt.Errorf("the service definition has no %s", key)
		}
	}
	if s.Name == "" {
		return Service{}, errors.New("the service definition's SERVICE_NAME is empty")
	}
	return s, nil
}

func known(key string) bool {
	for _, k := range serviceKeys {
		if k == key {
			return true
		}
	}
	return false
}

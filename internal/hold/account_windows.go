package hold

import (
	"errors"

	"golang.org/x/sys/windows"
)

// lookupAccountOS reads --while-user on Windows: a SID as text
// (ConvertStringSidToSidW), taken as given, or an account's name, looked
// up with LookupAccountNameW (windows.LookupSID, "LookupAccountNameW
// function", Microsoft Learn). A process's user is its token's
// (TokenUser): a user account, or a service's well-known one (NT
// AUTHORITY\LocalService); a group names no process's user.
func lookupAccountOS(value string) (sid, problem string, err error) {
	if s, err := windows.StringToSid(value); err == nil {
		return s.String(), "", nil
	}
	s, _, use, err := windows.LookupSID("", value)
	switch {
	case errors.Is(err, windows.ERROR_NONE_MAPPED):
		return "", noSuchAccount, nil
	case err != nil:
		return "", "", err
	}
	switch use {
	case windows.SidTypeUser, windows.SidTypeWellKnownGroup:
	default:
		return "", "names a group, not a user: give a user's name or a SID (S-1-5-21-...)", nil
	}
	text := s.String()
	if text == "" {
		return "", "", errors.New("ConvertSidToStringSidW gave no text")
	}
	return text, "", nil
}

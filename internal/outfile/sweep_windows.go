package outfile

import (
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/windows"
)

// lockTemp does nothing on Windows: a file another process holds open
// cannot be deleted (Go opens files without FILE_SHARE_DELETE), so a
// running tickscope's temporary survives sweepStale's delete as it is.
func lockTemp(*os.File) {}

// sweepStale removes from the directory the temporary files an earlier run of
// tickscope left behind when it was killed: a regular file named as
// tickscope names them, owned by the caller (its token's user, or the
// owner its token gives new files: the Administrators group when
// elevated), last written before this run began. A running tickscope's is
// held open and cannot be deleted; another user's, or anything else, is
// left alone, and so is any file whose owner cannot be read.
func sweepStale(d heldDir) {
	dir := d.path()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var owners []*windows.SID
	for _, e := range entries {
		if !e.Type().IsRegular() || !staleTemp.MatchString(e.Name()) {
			continue
		}
		if owners == nil {
			if owners = callerOwners(); len(owners) == 0 {
				return
			}
		}
		removeIfStale(filepath.Join(dir, e.Name()), owners)
	}
}

func removeIfStale(path string, owners []*windows.SID) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || !fi.ModTime().Before(runStart) {
		return
	}
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return
	}
	owner, _, err := sd.Owner()
	if err != nil || owner == nil {
		return
	}
	for _, o := range owners {
		if owner.Equals(o) {
			os.Remove(path)
			return
		}
	}
}

// callerOwners are the owners a file the caller created has: the token's
// user and its default owner for new objects (TOKEN_OWNER).
func callerOwners() []*windows.SID {
	token := windows.GetCurrentProcessToken()
	var owners []*windows.SID
	if u, err := token.GetTokenUser(); err == nil {
		if sid, err := u.User.Sid.Copy(); err == nil {
			owners = append(owners, sid)
		}
	}
	var n uint32
	windows.GetTokenInformation(token, windows.TokenOwner, nil, 0, &n)
	if n >= uint32(unsafe.Sizeof(uintptr(0))) {
		buf := make([]byte, n)
		if windows.GetTokenInformation(token, windows.TokenOwner, &buf[0], n, &n) == nil {
			// TOKEN_OWNER { PSID Owner }, its SID inside buf.
			if sid, err := (*(**windows.SID)(unsafe.Pointer(&buf[0]))).Copy(); err == nil {
				owners = append(owners, sid)
			}
		}
	}
	return owners
}

package winapi

import (
	"syscall"
	"unicode/utf16"
	"unsafe"

	"golang.org/x/sys/windows"
)

// SERVICE_REQUIRED_PRIVILEGES_INFOW, which golang.org/x/sys/windows has
// the level for (SERVICE_CONFIG_REQUIRED_PRIVILEGES_INFO) but not the
// structure:
//
//	typedef struct _SERVICE_REQUIRED_PRIVILEGES_INFOW {
//	    LPWSTR pmszRequiredPrivileges;
//	} SERVICE_REQUIRED_PRIVILEGES_INFOW;
//
// Documented in winsvc.h; pmszRequiredPrivileges is a multi-string (each
// name ends with a NUL, the list with another).
type serviceRequiredPrivilegesInfo struct {
	RequiredPrivileges *uint16
}

// SetServiceRequiredPrivileges makes privileges the only ones the
// service's token keeps, through ChangeServiceConfig2W
// (SERVICE_CONFIG_REQUIRED_PRIVILEGES_INFO). The service handle needs
// SERVICE_CHANGE_CONFIG.
func SetServiceRequiredPrivileges(service windows.Handle, privileges []string) error {
	var block []uint16
	for _, p := range privileges {
		if _, err := syscall.UTF16FromString(p); err != nil {
			return err
		}
		block = append(block, utf16.Encode([]rune(p))...)
		block = append(block, 0)
	}
	block = append(block, 0)
	info := serviceRequiredPrivilegesInfo{RequiredPrivileges: &block[0]}
	return windows.ChangeServiceConfig2(service, windows.SERVICE_CONFIG_REQUIRED_PRIVILEGES_INFO, (*byte)(unsafe.Pointer(&info)))
}

// ServiceRequiredPrivileges reads the service's required privileges
// through QueryServiceConfig2W (SERVICE_CONFIG_REQUIRED_PRIVILEGES_INFO);
// an empty list when it has none. The handle needs SERVICE_QUERY_CONFIG.
func ServiceRequiredPrivileges(service windows.Handle) ([]string, error) {
	buf, err := QueryServiceConfig2(service, windows.SERVICE_CONFIG_REQUIRED_PRIVILEGES_INFO)
	if err != nil {
		return nil, err
	}
	info := (*serviceRequiredPrivilegesInfo)(unsafe.Pointer(&buf[0]))
	privileges := []string{}
	if info.RequiredPrivileges == nil {
		return privileges, nil
	}
	// The multi-string lies inside buf, after the structure.
	start := uintptr(unsafe.Pointer(info.RequiredPrivileges)) - uintptr(unsafe.Pointer(&buf[0]))
	if start >= uintptr(len(buf)) {
		return privileges, nil
	}
	words := unsafe.Slice((*uint16)(unsafe.Pointer(info.RequiredPrivileges)), (uintptr(len(buf))-start)/2)
	for len(words) > 0 && words[0] != 0 {
		end := 0
		for end < len(words) && words[end] != 0 {
			end++
		}
		privileges = append(privileges, string(utf16.Decode(words[:end])))
		if end == len(words) {
			break
		}
		words = words[end+1:]
	}
	return privileges, nil
}

// QueryServiceConfig2 calls QueryServiceConfig2W at level with a buffer
// as large as it asks for, and returns the buffer.
func QueryServiceConfig2(service windows.Handle, level uint32) ([]byte, error) {
	n := uint32(1024)
	for {
		buf := make([]byte, n)
		err := windows.QueryServiceConfig2(service, level, &buf[0], n, &n)
		if err == nil {
			return buf, nil
		}
		if err != windows.ERROR_INSUFFICIENT_BUFFER || n <= uint32(len(buf)) {
			return nil, err
		}
	}
}

// QueryServiceConfig calls QueryServiceConfigW with a buffer as large as
// it asks for. The strings the result points to lie in the buffer, which
// the result keeps alive.
func QueryServiceConfig(service windows.Handle) (*windows.QUERY_SERVICE_CONFIG, error) {
	n := uint32(1024)
	for {
		buf := make([]byte, n)
		config := (*windows.QUERY_SERVICE_CONFIG)(unsafe.Pointer(&buf[0]))
		err := windows.QueryServiceConfig(service, config, n, &n)
		if err == nil {
			return config, nil
		}
		if err != windows.ERROR_INSUFFICIENT_BUFFER || n <= uint32(len(buf)) {
			return nil, err
		}
	}
}

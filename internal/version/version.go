// Package version says which tickscope this is: what --version prints, the
// raw files' tool stamp and the startup task's marker carry.
package version

import "runtime/debug"

// base is this source tree's version; cmd/tickscope/winres/winres.json
// carries the same number into the Windows version resource.
const base = "0.1.0"

// override is set at build time with
// -ldflags "-X github.com/tickscope/tickscope/internal/version.override=v1.2.3".
var override = ""

// String is the version: the one set at build time, or the module version
// (go install ...@v1.2.3), or base marked as a development build.
func String() string {
	if override != "" {
		return override
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return base + "-dev"
}

// Command checkrelease checks what GoReleaser wrote into a dist directory
// (.ci/run runs it after `goreleaser release --snapshot`):
//
//   - one archive per shipped target; in each Windows zip the console
//     program tickscope.exe (IMAGE_SUBSYSTEM_WINDOWS_CUI) and the windowless
//     holder tickscope-holder.exe (IMAGE_SUBSYSTEM_WINDOWS_GUI, so that Task
//     Scheduler opens no console for it), both with the manifest and version
//     resource; every binary built for its target's machine and carrying the
//     version GoReleaser set; in every archive LICENSE, README.md, the man
//     pages of docs/man and the completions of completions/, as committed;
//   - the .deb and .rpm of each Linux architecture (packages.go): the binary,
//     the man pages, the bash, zsh and fish completions where each shell
//     looks, and the licence, by its SPDX name BSD-3-Clause in the metadata
//     (the RPM License tag, Debian's machine-readable copyright file) and in
//     full;
//   - the Scoop manifest and the winget manifests (manifests.go), validated
//     against the published JSON schemas vendored in .ci/schemas, naming the
//     zips of this dist by their SHA-256, and the licence.
//
// The checksums are checked by sha256sum -c, as a user checks them, and the
// .deb is installed by .ci/run.
//
// Usage, from the repository's root: go run ./.ci/checkrelease DIST (the
// version is read from DIST/metadata.json, which GoReleaser writes)
package main

import (
	"archive/zip"
	"bytes"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
)

// The PE constants (winnt.h; "PE Format", Microsoft Learn).
const (
	imageSubsystemWindowsGUI = 2
	imageSubsystemWindowsCUI = 3
)

type target struct {
	goos, goarch, ext string
}

var targets = []target{
	{"windows", "amd64", "zip"},
	{"windows", "arm64", "zip"},
	{"linux", "amd64", "tar.gz"},
	{"linux", "arm64", "tar.gz"},
	{"darwin", "arm64", "tar.gz"},
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: checkrelease DIST")
		os.Exit(2)
	}
	dist := os.Args[1]
	version, tag, err := readVersion(dist)
	if err != nil {
		fmt.Fprintln(os.Stderr, "checkrelease:", err)
		os.Exit(1)
	}
	fmt.Println("version", version)
	want, err := readShipped()
	if err != nil {
		fmt.Fprintln(os.Stderr, "checkrelease:", err)
		os.Exit(1)
	}
	failed := false
	report := func(name string, err error) {
		if err != nil {
			fmt.Printf("FAIL %s: %v\n", name, err)
			failed = true
			return
		}
		fmt.Printf("ok   %s\n", name)
	}
	for _, t := range targets {
		name := fmt.Sprintf("tickscope_%s_%s_%s.%s", version, t.goos, t.goarch, t.ext)
		report(name, check(filepath.Join(dist, name), t, version, want))
	}
	checkPackages(dist, version, want, report)
	checkManifests(dist, version, tag, report)
	if failed {
		os.Exit(1)
	}
}

// shipped is what every archive and package carries besides the binaries,
// as committed in the repository.
type shipped struct {
	license, debCopyright []byte
	man                   map[string][]byte // docs/man/*.1 by name
	completions           map[string][]byte // completions/* by name
}

func readShipped() (shipped, error) {
	var s shipped
	var err error
	if s.license, err = os.ReadFile("LICENSE"); err != nil {
		return s, err
	}
	if s.debCopyright, err = os.ReadFile("packaging/debian/copyright"); err != nil {
		return s, err
	}
	if s.man, err = readDir("docs/man"); err != nil {
		return s, err
	}
	if len(s.man) == 0 || s.man["tickscope.1"] == nil {
		return s, fmt.Errorf("docs/man has no tickscope.1")
	}
	if s.completions, err = readDir("completions"); err != nil {
		return s, err
	}
	for _, name := range []string{"tickscope.bash", "tickscope.zsh", "tickscope.fish", "tickscope.ps1"} {
		if s.completions[name] == nil {
			return s, fmt.Errorf("completions/ has no %s", name)
		}
	}
	return s, nil
}

func readDir(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		files[e.Name()] = data
	}
	return files, nil
}

// same says whether got holds want's files byte for byte, where got is
// keyed by path and name(n) is the path file n of want must have.
func same(got map[string][]byte, want map[string][]byte, name func(string) string) error {
	for n, data := range want {
		file, ok := got[name(n)]
		if !ok {
			return fmt.Errorf("no %s", name(n))
		}
		if !bytes.Equal(file, data) {
			return fmt.Errorf("%s differs from the repository's", name(n))
		}
	}
	return nil
}

// check reads an archive's files and checks each binary, the licence, the
// man pages and the completions.
func check(archive string, t target, version string, shipped shipped) error {
	files, err := read(archive, t.ext)
	if err != nil {
		return err
	}
	want := map[string]int{"tickscope": 0}
	if t.goos == "windows" {
		want = map[string]int{"tickscope.exe": imageSubsystemWindowsCUI, "tickscope-holder.exe": imageSubsystemWindowsGUI}
	}
	for name, subsystem := range want {
		data, ok := files[name]
		if !ok {
			return fmt.Errorf("no %s in the archive (it holds %d files)", name, len(files))
		}
		if !bytes.Contains(data, []byte(version)) {
			return fmt.Errorf("%s does not carry the version %s (-X .../internal/version.override)", name, version)
		}
		if err := checkBinary(name, data, t, subsystem); err != nil {
			return err
		}
	}
	if _, ok := files["README.md"]; !ok {
		return fmt.Errorf("no README.md in the archive")
	}
	if !bytes.Equal(files["LICENSE"], shipped.license) {
		return fmt.Errorf("no LICENSE as the repository's in the archive")
	}
	if err := same(files, shipped.man, func(n string) string { return "man/" + n }); err != nil {
		return err
	}
	return same(files, shipped.completions, func(n string) string { return "completions/" + n })
}

func checkBinary(name string, data []byte, t target, subsystem int) error {
	switch t.goos {
	case "windows":
		f, err := pe.NewFile(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		machine := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[t.goarch]
		if f.Machine != machine {
			return fmt.Errorf("%s: machine %#x, want %#x", name, f.Machine, machine)
		}
		var got uint16
		switch h := f.OptionalHeader.(type) {
		case *pe.OptionalHeader64:
			got = h.Subsystem
		case *pe.OptionalHeader32:
			got = h.Subsystem
		}
		if int(got) != subsystem {
			return fmt.Errorf("%s: subsystem %d, want %d (2 GUI, 3 console)", name, got, subsystem)
		}
		// The resources the committed rsrc_windows_*.syso files link in
		// (cmd/tickscope/wine_test.go's checkResources looks for the same).
		for _, want := range [][]byte{
			[]byte(`<supportedOS Id="{8e0f7a12-bfb3-4fe8-b9a5-48fd50a15a9a}"/>`),
			[]byte(`level="asInvoker"`),
			utf16("VS_VERSION_INFO"),
		} {
			if !bytes.Contains(data, want) {
				return fmt.Errorf("%s lacks the resource text %q", name, want)
			}
		}
	case "linux":
		f, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[t.goarch]
		if f.Machine != machine {
			return fmt.Errorf("%s: machine %v, want %v", name, f.Machine, machine)
		}
	case "darwin":
		f, err := macho.NewFile(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		if f.Cpu != macho.CpuArm64 {
			return fmt.Errorf("%s: CPU %v, want arm64", name, f.Cpu)
		}
	}
	return nil
}

// read returns an archive's regular files by their path in it:
// "tickscope", "man/tickscope.1" (GoReleaser wraps them in no directory).
func read(archive, ext string) (map[string][]byte, error) {
	files := map[string][]byte{}
	if ext == "zip" {
		z, err := zip.OpenReader(archive)
		if err != nil {
			return nil, err
		}
		defer z.Close()
		for _, f := range z.File {
			r, err := f.Open()
			if err != nil {
				return nil, err
			}
			data, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				return nil, err
			}
			files[path.Clean(f.Name)] = data
		}
		return files, nil
	}
	data, err := os.ReadFile(archive)
	if err != nil {
		return nil, err
	}
	return readTarGz(data)
}

func utf16(s string) []byte {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r), 0)
	}
	return b
}

// readVersion reads the version GoReleaser built, and the tag it names
// the release by, from its metadata.json.
func readVersion(dist string) (version, tag string, err error) {
	data, err := os.ReadFile(filepath.Join(dist, "metadata.json"))
	if err != nil {
		return "", "", err
	}
	var meta struct {
		Version string `json:"version"`
		Tag     string `json:"tag"`
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return "", "", fmt.Errorf("metadata.json: %v", err)
	}
	if meta.Version == "" || meta.Tag == "" {
		return "", "", fmt.Errorf("metadata.json names no version or no tag")
	}
	return meta.Version, meta.Tag, nil
}

package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// A Linux package's architecture in each format's own words.
var packageArches = []struct{ goarch, deb, rpm string }{
	{"amd64", "amd64", "x86_64"},
	{"arm64", "arm64", "aarch64"},
}

// packageFiles is where each package puts the man pages, the completions
// and the licence, by shell; what differs between the formats is the zsh
// directory (Debian's vendor-completions, Fedora's site-functions) and the
// licence's place.
func packageFiles(format string, s shipped) map[string][]byte {
	files := map[string][]byte{
		"usr/share/bash-completion/completions/tickscope":    s.completions["tickscope.bash"],
		"usr/share/fish/vendor_completions.d/tickscope.fish": s.completions["tickscope.fish"],
	}
	for name, page := range s.man {
		files["usr/share/man/man1/"+name] = page
	}
	if format == "deb" {
		files["usr/share/zsh/vendor-completions/_tickscope"] = s.completions["tickscope.zsh"]
		files["usr/share/doc/tickscope/copyright"] = s.debCopyright
	} else {
		files["usr/share/zsh/site-functions/_tickscope"] = s.completions["tickscope.zsh"]
		files["usr/share/licenses/tickscope/LICENSE"] = s.license
	}
	return files
}

// checkPackages checks the .deb and .rpm of every Linux architecture.
func checkPackages(dist, version string, s shipped, report func(string, error)) {
	if err := checkDebCopyright(s); err != nil {
		report("packaging/debian/copyright", err)
	}
	for _, a := range packageArches {
		debs, _ := filepath.Glob(filepath.Join(dist, "*_"+a.deb+".deb"))
		rpms, _ := filepath.Glob(filepath.Join(dist, "*."+a.rpm+".rpm"))
		for _, p := range []struct {
			format string
			found  []string
			check  func(string) error
		}{
			{"deb", debs, func(f string) error { return checkDeb(f, a.goarch, a.deb, version, s) }},
			{"rpm", rpms, func(f string) error { return checkRPM(f, a.goarch, a.rpm, version, s) }},
		} {
			if len(p.found) != 1 {
				report(fmt.Sprintf("the %s package for %s", p.format, a.goarch), fmt.Errorf("%d found in %s, want 1: %q", len(p.found), dist, p.found))
				continue
			}
			report(filepath.Base(p.found[0]), p.check(p.found[0]))
		}
	}
}

// checkDebCopyright holds Debian's machine-readable copyright file to
// LICENSE: the licence is named by its SPDX identifier, and its text is
// LICENSE's, below the copyright line, in the format's continuation lines.
func checkDebCopyright(s shipped) error {
	if !bytes.Contains(s.debCopyright, []byte("\nLicense: BSD-3-Clause\n")) {
		return errors.New("names no License: BSD-3-Clause")
	}
	_, text, ok := bytes.Cut(s.license, []byte("\n\n"))
	if !ok {
		return errors.New("LICENSE has no blank line after its copyright line")
	}
	var want bytes.Buffer
	for _, line := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
		if line == "" {
			line = "."
		}
		want.WriteString(" " + line + "\n")
	}
	if !bytes.HasSuffix(s.debCopyright, want.Bytes()) {
		return errors.New("does not end with LICENSE's text (regenerate it from LICENSE: each line indented by a space, a blank line as \" .\")")
	}
	return nil
}

// checkDeb reads a .deb (an ar archive of debian-binary, control.tar.gz and
// data.tar.gz, as nfpm writes it) and checks its control fields and files.
func checkDeb(file, goarch, arch, version string, s shipped) error {
	members, err := readAr(file)
	if err != nil {
		return err
	}
	if string(members["debian-binary"]) != "2.0\n" {
		return fmt.Errorf("debian-binary is %q, want 2.0", members["debian-binary"])
	}
	control, err := readTarGz(members["control.tar.gz"])
	if err != nil {
		return fmt.Errorf("control.tar.gz: %v", err)
	}
	fields := map[string]string{}
	for _, line := range strings.Split(string(control["control"]), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok && !strings.HasPrefix(line, " ") {
			fields[k] = v
		}
	}
	// nfpm writes a pre-release as Debian orders it: 1.2.3-rc1 as 1.2.3~rc1.
	for k, want := range map[string]string{"Package": "tickscope", "Version": strings.Replace(version, "-", "~", 1), "Architecture": arch} {
		if fields[k] != want {
			return fmt.Errorf("control: %s is %q, want %q", k, fields[k], want)
		}
	}
	data, err := readTarGz(members["data.tar.gz"])
	if err != nil {
		return fmt.Errorf("data.tar.gz: %v", err)
	}
	return checkPackageFiles(data, "deb", goarch, version, s)
}

func checkPackageFiles(files map[string][]byte, format, goarch, version string, s shipped) error {
	bin, ok := files["usr/bin/tickscope"]
	if !ok {
		return errors.New("no usr/bin/tickscope")
	}
	if !bytes.Contains(bin, []byte(version)) {
		return fmt.Errorf("usr/bin/tickscope does not carry the version %s", version)
	}
	if err := checkBinary("usr/bin/tickscope", bin, target{"linux", goarch, format}, 0); err != nil {
		return err
	}
	return same(files, packageFiles(format, s), func(n string) string { return n })
}

// readAr returns the members of an ar archive by name ("!<arch>\n", then
// per member a 60-byte header and the data padded to an even size).
func readAr(file string) (map[string][]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(data, []byte("!<arch>\n")) {
		return nil, errors.New("not an ar archive")
	}
	members := map[string][]byte{}
	for rest := data[8:]; len(rest) > 0; {
		if len(rest) < 60 || string(rest[58:60]) != "`\n" {
			return nil, errors.New("a damaged ar member header")
		}
		name := strings.TrimSuffix(strings.TrimSpace(string(rest[0:16])), "/")
		size, err := strconv.Atoi(strings.TrimSpace(string(rest[48:58])))
		if err != nil || size < 0 || size > len(rest)-60 {
			return nil, fmt.Errorf("ar member %q: a bad size", name)
		}
		members[name] = rest[60 : 60+size]
		rest = rest[60+size+size%2:]
		if len(rest) == 1 && rest[0] == '\n' {
			break
		}
	}
	return members, nil
}

// readTarGz returns a gzipped tar's regular files by path, without "./".
func readTarGz(data []byte) (map[string][]byte, error) {
	if data == nil {
		return nil, errors.New("missing")
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files[strings.TrimPrefix(path.Clean(h.Name), "/")] = content
	}
}

// RPM header tags (rpm's include/rpm/rpmtag.h) and the one type read here.
const (
	rpmTagName              = 1000
	rpmTagLicense           = 1014
	rpmTagArch              = 1022
	rpmTagPayloadCompressor = 1125
	rpmTypeString           = 6
)

// checkRPM reads an .rpm (a 96-byte lead, the signature header padded to 8
// bytes, the header, then the compressed cpio payload) and checks its
// name, architecture and licence tags and its files.
func checkRPM(file, goarch, arch, version string, s shipped) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if len(data) < 96 || !bytes.Equal(data[:4], []byte{0xed, 0xab, 0xee, 0xdb}) {
		return errors.New("no RPM lead")
	}
	_, size, err := rpmHeader(data[96:])
	if err != nil {
		return fmt.Errorf("signature header: %v", err)
	}
	offset := 96 + (size+7)/8*8
	tags, size, err := rpmHeader(data[offset:])
	if err != nil {
		return fmt.Errorf("header: %v", err)
	}
	for tag, want := range map[int]string{rpmTagName: "tickscope", rpmTagArch: arch, rpmTagLicense: "BSD-3-Clause", rpmTagPayloadCompressor: "gzip"} {
		if tags[tag] != want {
			return fmt.Errorf("header tag %d is %q, want %q", tag, tags[tag], want)
		}
	}
	gz, err := gzip.NewReader(bytes.NewReader(data[offset+size:]))
	if err != nil {
		return fmt.Errorf("payload: %v", err)
	}
	files, err := readCpio(bufio.NewReader(gz))
	if err != nil {
		return fmt.Errorf("payload: %v", err)
	}
	return checkPackageFiles(files, "rpm", goarch, version, s)
}

// rpmHeader returns a header structure's string tags and its size: the
// magic 8e ad e8 01, four reserved bytes, the index's entry count and the
// store's size, then the entries (tag, type, offset, count) and the store.
func rpmHeader(b []byte) (map[int]string, int, error) {
	if len(b) < 16 || !bytes.Equal(b[:4], []byte{0x8e, 0xad, 0xe8, 0x01}) {
		return nil, 0, errors.New("no header magic")
	}
	n, storeSize := int(binary.BigEndian.Uint32(b[8:])), int(binary.BigEndian.Uint32(b[12:]))
	size := 16 + 16*n + storeSize
	if n < 0 || storeSize < 0 || size > len(b) {
		return nil, 0, errors.New("truncated")
	}
	store := b[16+16*n : size]
	tags := map[int]string{}
	for i := range n {
		e := b[16+16*i:]
		tag, typ, off := int(binary.BigEndian.Uint32(e)), binary.BigEndian.Uint32(e[4:]), int(binary.BigEndian.Uint32(e[8:]))
		if typ != rpmTypeString || off < 0 || off >= len(store) {
			continue
		}
		if end := bytes.IndexByte(store[off:], 0); end >= 0 {
			tags[tag] = string(store[off : off+end])
		}
	}
	return tags, size, nil
}

// readCpio returns a "newc" cpio archive's regular files by path, without
// "./": each a 110-byte header of "070701" and 13 hexadecimal fields, the
// name and its NUL padded to 4 bytes, the data padded to 4 bytes, up to
// the entry named TRAILER!!!.
func readCpio(r io.Reader) (map[string][]byte, error) {
	files := map[string][]byte{}
	var hdr [110]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return nil, err
		}
		if string(hdr[:6]) != "070701" {
			return nil, errors.New("not a newc cpio header")
		}
		field := func(i int) (int, error) {
			v, err := strconv.ParseUint(string(hdr[6+8*i:14+8*i]), 16, 32)
			return int(v), err
		}
		mode, err1 := field(1)
		size, err2 := field(6)
		nameSize, err3 := field(11)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, err
		}
		name := make([]byte, (110+nameSize+3)/4*4-110)
		if _, err := io.ReadFull(r, name); err != nil {
			return nil, err
		}
		entry := string(bytes.TrimRight(name[:nameSize], "\x00"))
		if entry == "TRAILER!!!" {
			return files, nil
		}
		content := make([]byte, (size+3)/4*4)
		if _, err := io.ReadFull(r, content); err != nil {
			return nil, err
		}
		if mode&0o170000 == 0o100000 {
			files[strings.TrimPrefix(path.Clean(entry), "/")] = content[:size]
		}
	}
}

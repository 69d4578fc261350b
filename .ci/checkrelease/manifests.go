package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// schemaDir holds the published JSON schemas of the manifests, vendored
// (.ci/schemas/README.md names their source and commit).
const schemaDir = ".ci/schemas"

// The winget manifests GoReleaser writes, by ManifestType, and the schema
// of the manifest version it writes (1.12.0).
var wingetSchemas = map[string]string{
	"version":       "manifest.version.1.12.0.json",
	"installer":     "manifest.installer.1.12.0.json",
	"defaultLocale": "manifest.defaultLocale.1.12.0.json",
}

// The Windows zips the manifests must name, by the architecture in
// Scoop's words and in winget's.
var windowsZips = []struct{ goarch, scoop, winget string }{
	{"amd64", "64bit", "x64"},
	{"arm64", "arm64", "arm64"},
}

// checkManifests validates the Scoop manifest and the winget manifests
// against their schemas and checks that they name this release: its
// version, its Windows zips by URL and SHA-256, and its licence.
func checkManifests(dist, version, tag string, report func(string, error)) {
	zips := map[string]string{} // goarch -> SHA-256 of the zip in dist
	for _, z := range windowsZips {
		name := fmt.Sprintf("tickscope_%s_windows_%s.zip", version, z.goarch)
		sum, err := sha256File(filepath.Join(dist, name))
		if err != nil {
			report("the Scoop and winget manifests", err)
			return
		}
		zips[z.goarch] = sum
	}
	report("scoop/tickscope.json", checkScoop(filepath.Join(dist, "scoop", "tickscope.json"), version, tag, zips))
	manifests, err := findWinget(filepath.Join(dist, "winget"))
	if err != nil {
		report("winget manifests", err)
		return
	}
	for _, typ := range []string{"version", "installer", "defaultLocale"} {
		m, ok := manifests[typ]
		if !ok {
			report("winget manifests", fmt.Errorf("no %s manifest in %s/winget (found %d)", typ, dist, len(manifests)))
			continue
		}
		report("winget "+filepath.Base(m.path), checkWinget(m, typ, version, tag, zips))
	}
}

func checkScoop(file, version, tag string, zips map[string]string) error {
	doc, err := readJSON(file)
	if err != nil {
		return err
	}
	if err := validate(doc, "scoop.schema.json"); err != nil {
		return err
	}
	var m struct {
		Version      string `json:"version"`
		License      string `json:"license"`
		Architecture map[string]struct {
			URL  string   `json:"url"`
			Hash string   `json:"hash"`
			Bin  []string `json:"bin"`
		} `json:"architecture"`
	}
	if err := remarshal(doc, &m); err != nil {
		return err
	}
	if m.Version != version || m.License != "BSD-3-Clause" {
		return fmt.Errorf("version %q and license %q, want %q and BSD-3-Clause", m.Version, m.License, version)
	}
	for _, z := range windowsZips {
		a, ok := m.Architecture[z.scoop]
		if !ok {
			return fmt.Errorf("no %s architecture", z.scoop)
		}
		if err := namesZip(a.URL, a.Hash, version, tag, z.goarch, zips); err != nil {
			return fmt.Errorf("%s: %v", z.scoop, err)
		}
		if !slices.Contains(a.Bin, "tickscope.exe") {
			return fmt.Errorf("%s: bin %q lacks tickscope.exe", z.scoop, a.Bin)
		}
	}
	return nil
}

type wingetManifest struct {
	path string
	doc  any
}

// findWinget reads every manifest under dir by its ManifestType.
func findWinget(dir string) (map[string]wingetManifest, error) {
	found := map[string]wingetManifest{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var doc any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("%s: %v", p, err)
		}
		// Through JSON, so that the validator sees JSON's types.
		if doc, err = viaJSON(doc); err != nil {
			return fmt.Errorf("%s: %v", p, err)
		}
		typ, _ := doc.(map[string]any)["ManifestType"].(string)
		if _, dup := found[typ]; dup {
			return fmt.Errorf("two %q manifests: %s and %s", typ, found[typ].path, p)
		}
		found[typ] = wingetManifest{p, doc}
		return nil
	})
	return found, err
}

func checkWinget(m wingetManifest, typ, version, tag string, zips map[string]string) error {
	if err := validate(m.doc, wingetSchemas[typ]); err != nil {
		return err
	}
	var w struct {
		PackageVersion string
		License        string
		Installers     []struct {
			Architecture    string
			InstallerURL    string `json:"InstallerUrl"`
			InstallerSha256 string
		}
	}
	if err := remarshal(m.doc, &w); err != nil {
		return err
	}
	if w.PackageVersion != version {
		return fmt.Errorf("PackageVersion %q, want %q", w.PackageVersion, version)
	}
	switch typ {
	case "defaultLocale":
		if w.License != "BSD-3-Clause" {
			return fmt.Errorf("License %q, want BSD-3-Clause", w.License)
		}
	case "installer":
		if len(w.Installers) != len(windowsZips) {
			return fmt.Errorf("%d installers, want %d", len(w.Installers), len(windowsZips))
		}
		for _, z := range windowsZips {
			i := -1
			for j, in := range w.Installers {
				if in.Architecture == z.winget {
					i = j
				}
			}
			if i < 0 {
				return fmt.Errorf("no %s installer", z.winget)
			}
			if err := namesZip(w.Installers[i].InstallerURL, w.Installers[i].InstallerSha256, version, tag, z.goarch, zips); err != nil {
				return fmt.Errorf("%s: %v", z.winget, err)
			}
		}
	}
	return nil
}

// namesZip checks that a manifest's URL and hash are those of the zip for
// goarch in this dist, on the project's GitHub Releases under the tag.
func namesZip(url, hash, version, tag, goarch string, zips map[string]string) error {
	wantURL := fmt.Sprintf("https://github.com/tickscope/tickscope/releases/download/%s/tickscope_%s_windows_%s.zip", tag, version, goarch)
	if url != wantURL {
		return fmt.Errorf("url %q, want %q", url, wantURL)
	}
	if !strings.EqualFold(hash, zips[goarch]) {
		return fmt.Errorf("hash %q is not the zip's SHA-256 %s", hash, zips[goarch])
	}
	return nil
}

// validate checks doc against the vendored schema file name.
func validate(doc any, name string) error {
	file := filepath.Join(schemaDir, name)
	schemaDoc, err := readJSON(file)
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(file, schemaDoc); err != nil {
		return err
	}
	schema, err := c.Compile(file)
	if err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	if err := schema.Validate(doc); err != nil {
		return fmt.Errorf("against %s: %v", name, err)
	}
	return nil
}

func readJSON(file string) (any, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return doc, nil
}

func viaJSON(doc any) (any, error) {
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

func remarshal(doc, v any) error {
	data, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

func sha256File(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

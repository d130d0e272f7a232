// Command krew-manifest fills the krew plugin manifest template (.krew.yaml,
// written in krew-release-bot's template language) from a goreleaser
// dist/ directory, offline: each archive's release URI for the tag, and its
// sha256 from dist/checksums.txt, checked against the archive itself.
//
// The release bot fills the same template from the published release on a
// tag; this command makes krew-manifest.yaml and dist/krew/ssa.yaml (make
// krew-manifest, make release-snapshot) so that what is checked in and what
// the install test installs are the template's output, never hand-edited.
//
//	go run ./hack/krew-manifest [-dist dist] [-tag vX.Y.Z] [-partial] [-o FILE]
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "krew-manifest: "+err.Error())
		os.Exit(1)
	}
}

type options struct {
	template  string
	dist      string
	checksums string
	trustList bool
	tag       string
	commit    string
	partial   bool
	out       string
}

func run(args []string, stdout io.Writer) error {
	var o options
	flags := flag.NewFlagSet("krew-manifest", flag.ContinueOnError)
	flags.StringVar(&o.template, "template", ".krew.yaml", "The manifest template, in krew-release-bot's template language.")
	flags.StringVar(&o.dist, "dist", "dist", "goreleaser's output directory: the archives, and the defaults of -checksums and -tag.")
	flags.StringVar(&o.checksums, "checksums", "", "The sha256 list, as sha256sum writes it (default DIST/checksums.txt).")
	flags.BoolVar(&o.trustList, "trust-checksums", false, "Take the sums from the list without reading the archives in DIST.")
	flags.StringVar(&o.tag, "tag", "", "The release tag, as in the archive URIs (default v + the version in DIST/metadata.json).")
	flags.StringVar(&o.commit, "commit", "", "The commit the archives were built from, for the header (default: DIST/metadata.json's, unless -tag is given).")
	flags.BoolVar(&o.partial, "partial", false, "Drop the platforms whose archive is not in the list (a host-only build) instead of failing.")
	flags.StringVar(&o.out, "o", "", "Write the manifest to this file instead of stdout.")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", flags.Args())
	}
	if o.checksums == "" {
		o.checksums = filepath.Join(o.dist, "checksums.txt")
	}
	if o.tag == "" {
		m, err := distMetadata(filepath.Join(o.dist, "metadata.json"))
		if err != nil {
			return fmt.Errorf("%w (or say -tag)", err)
		}
		o.tag = "v" + strings.TrimPrefix(m.Version, "v")
		if o.commit == "" && len(m.Commit) >= 7 {
			o.commit = m.Commit[:7]
		}
	}
	manifest, err := o.render()
	if err != nil {
		return err
	}
	if o.out == "" {
		_, err = stdout.Write(manifest)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(o.out, manifest, 0o644)
}

// metadata is what goreleaser built: the version (the tag's, or the
// snapshot's) and the commit.
type metadata struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
}

func distMetadata(file string) (metadata, error) {
	var m metadata
	b, err := os.ReadFile(file)
	if err != nil {
		return m, fmt.Errorf("reading the version goreleaser built: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("reading the version goreleaser built: %w", err)
	}
	if m.Version == "" {
		return m, fmt.Errorf("%s has no version", file)
	}
	return m, nil
}

// readChecksums reads "SUM  NAME" lines.
func readChecksums(file string) (map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != sha256.Size*2 {
			return nil, fmt.Errorf("%s: %q is not \"SHA256  NAME\"", file, sc.Text())
		}
		sums[name] = sum
	}
	return sums, sc.Err()
}

func sha256File(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }() // read only
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// missingURI marks a platform whose archive was not built (-partial).
const missingURI = "missing:"

// render executes the template with krew-release-bot's data (TagName) and
// functions (addURIAndSha, indent).
func (o *options) render() ([]byte, error) {
	sums, err := readChecksums(o.checksums)
	if err != nil {
		return nil, err
	}
	text, err := os.ReadFile(o.template)
	if err != nil {
		return nil, err
	}
	addURIAndSha := func(url, tag string) (string, error) {
		uri, err := expandURL(url, tag)
		if err != nil {
			return "", err
		}
		name := path.Base(uri)
		sum, ok := sums[name]
		if !ok {
			if o.partial {
				return "uri: " + missingURI + uri + "\n    sha256: " + strings.Repeat("0", 64), nil
			}
			return "", fmt.Errorf("%s is not in %s", name, o.checksums)
		}
		if !o.trustList {
			got, err := sha256File(filepath.Join(o.dist, name))
			if err != nil {
				return "", err
			}
			if got != sum {
				return "", fmt.Errorf("%s has sha256 %s, %s says %s", name, got, o.checksums, sum)
			}
		}
		// The bot's exact layout: platform fields are indented by four.
		return fmt.Sprintf("uri: %s\n    sha256: %s", uri, sum), nil
	}
	t, err := template.New(filepath.Base(o.template)).Funcs(template.FuncMap{
		"addURIAndSha": addURIAndSha,
		"indent":       indent,
	}).Parse(string(text))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, struct{ TagName string }{o.tag}); err != nil {
		return nil, err
	}
	body := stripLeadingComments(buf.Bytes())
	if bytes.Contains(body, []byte(missingURI)) {
		if body, err = dropMissing(body); err != nil {
			return nil, err
		}
	}
	built := o.tag
	if o.commit != "" {
		built += " built from commit " + o.commit
	}
	header := fmt.Sprintf("# Generated from %s by hack/krew-manifest (make krew-manifest) for %s,\n# with the sha256 of its release archives. Do not edit: change %s.\n",
		filepath.Base(o.template), built, filepath.Base(o.template))
	return append([]byte(header), body...), nil
}

// expandURL fills {{ .TagName }} and {{ .Version }} in an archive URL, as
// the bot does.
func expandURL(url, tag string) (string, error) {
	t, err := template.New("url").Parse(url)
	if err != nil {
		return "", err
	}
	version := regexp.MustCompile(`\d+(\.\d+)+`).FindString(tag)
	if version == "" {
		version = tag
	}
	var buf bytes.Buffer
	err = t.Execute(&buf, struct{ TagName, Version string }{tag, version})
	return buf.String(), err
}

// indent is the bot's template function of that name.
func indent(spaces int, v string) string {
	v = strings.ReplaceAll(v, "    sha256:", "sha256:")
	pad := strings.Repeat(" ", spaces)
	return strings.TrimSpace(pad + strings.ReplaceAll(v, "\n", "\n"+pad))
}

// stripLeadingComments drops the template's own header comment.
func stripLeadingComments(b []byte) []byte {
	for bytes.HasPrefix(b, []byte("#")) {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil
		}
		b = b[i+1:]
	}
	return b
}

// dropMissing removes the platforms whose archive was not built. The
// manifest is marshalled again, so its keys come out sorted.
func dropMissing(manifest []byte) ([]byte, error) {
	var m map[string]any
	if err := yaml.Unmarshal(manifest, &m); err != nil {
		return nil, err
	}
	spec, _ := m["spec"].(map[string]any)
	platforms, _ := spec["platforms"].([]any)
	var kept []any
	for _, p := range platforms {
		if uri, _ := p.(map[string]any)["uri"].(string); !strings.HasPrefix(uri, missingURI) {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return nil, errors.New("none of the template's archives was built")
	}
	spec["platforms"] = kept
	return yaml.Marshal(m)
}

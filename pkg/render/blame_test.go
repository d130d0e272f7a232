package render_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// The text right of the blame gutter is the object's YAML: read back, it
// is the object (without managedFields) value for value, whatever the
// gutter says about it.
func TestBlameTextIsTheObject(t *testing.T) {
	tests := []struct {
		name    string
		fixture string
		secrets bool
	}{
		{name: "deployment", fixture: "deployment.yaml"},
		{name: "configmap with a literal block", fixture: "configmap.yaml"},
		{name: "secret redacted", fixture: "secret.yaml"},
		{name: "secret shown", fixture: "secret.yaml", secrets: true},
		{name: "no managedFields", fixture: "configmap-no-managed-fields.yaml"},
		{name: "every block style, nested lists, empty values", fixture: "widget.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := analyze(t, tt.fixture, ownership.Filter{}, ownership.Options{ShowSecretValues: tt.secrets})
			var buf bytes.Buffer
			if err := render.Blame(&buf, r, render.Options{Time: render.TimeNone, Palette: render.NewPalette(false)}); err != nil {
				t.Fatal(err)
			}
			var text []string
			for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
				if strings.HasPrefix(line, "#") {
					continue
				}
				_, rest, ok := strings.Cut(line, " │")
				if !ok {
					t.Fatalf("line without a gutter: %q", line)
				}
				text = append(text, strings.TrimPrefix(rest, " "))
			}
			var got map[string]any
			if err := yaml.Unmarshal([]byte(strings.Join(text, "\n")), &got); err != nil {
				t.Fatalf("blame text is not YAML: %v\n%s", err, strings.Join(text, "\n"))
			}
			if diff := cmp.Diff(r.Content, got); diff != "" {
				t.Errorf("blame text differs from the object (-want +got):\n%s", diff)
			}
		})
	}
}

// Every line names the owners the ownership model gives its path; spot
// checks of lines whose attribution is easy to get wrong.
func TestBlameAttribution(t *testing.T) {
	r := analyze(t, "deployment.yaml", ownership.Filter{}, ownership.Options{})
	var buf bytes.Buffer
	if err := render.Blame(&buf, r, render.Options{Time: render.TimeNone, Palette: render.NewPalette(false)}); err != nil {
		t.Fatal(err)
	}
	gutterOf := map[string][]string{}
	for _, line := range strings.Split(buf.String(), "\n") {
		g, text, ok := strings.Cut(line, " │ ")
		if ok {
			gutterOf[text] = append(gutterOf[text], strings.TrimSpace(g))
		}
	}
	tests := []struct {
		name string
		line string
		want []string
	}{
		{name: "shared field lists every co-owner", line: "        image: nginx:1.27", want: []string{"platform (Apply), team-a (Apply)"}},
		{name: "inside an atomic map, the map's owner", line: "      app.kubernetes.io/name: web", want: []string{"platform (Apply)"}},
		{name: "atomic list items, the list's owner", line: "        - infinity", want: []string{"platform (Apply)"}},
		{name: "defaulted field is unowned, not given to its container", line: "        imagePullPolicy: IfNotPresent", want: []string{"(unowned)", "(unowned)"}},
		{name: "defaulted map and its children are unowned", line: "      maxSurge: 25%", want: []string{"(unowned)"}},
		{name: "scale subresource owner", line: "  replicas: 3", want: []string{"kubectl (Update /scale)", "kube-controller-manager (Update /status)"}},
		{name: "identity metadata is not tracked", line: "  name: web", want: []string{"(not tracked)"}},
		{name: "structural line has no owner", line: "  template:", want: []string{""}},
		{name: "associative list item keyed on two fields", line: "          protocol: UDP", want: []string{"platform (Apply)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, gutterOf[tt.line]); diff != "" {
				t.Errorf("owners of %q (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

// yamlScalar's shortcuts write what yaml.v3 writes.
func TestYAMLScalarMatchesYAML(t *testing.T) {
	values := []any{
		"web", "nginx", "app.kubernetes.io", "a/b-c_d.e", "Yes", "yes", "YES", "y", "Y", "n", "No", "on", "Off", "true", "False", "null", "NULL", "Null",
		"~", "", "-", ".", "1", "1.5", "0x1F", "1e3", "e3", "E3", "inf", ".inf", "nan", ".nan", "NaN", "2026-11-22", "2026-11-22T00:11:52Z", "12:30",
		"a b", "value 1", "a  b", "a b ", " a", "Deployment does not have minimum availability", "a b: c", "a #b", "yes no", "a\tb", "a\nb",
		"a: b", "a:b", "#x", "x#y", "- x", "[x]", "{x}", "*x", "&x", "!x", "%x", "@x", "`x", "'x'", "\"x\"", "x'", "<<", "=", "a=b",
		"Deployment", "IfNotPresent", "RollingUpdate", "25%", "/dev/termination-log", "production", "key-00001.conf", "é",
		int64(0), int64(-42), int64(1 << 62), true, false, nil,
	}
	// Numbers as strings (an env value, a port as text), with leading
	// zeros and up to 20 digits, and 21 (past the shortcut).
	for _, d := range []string{"0", "7", "00", "007", "42", "8080", "65535", "0123", "99999999999999999999", "000000000000000000000"} {
		values = append(values, d)
	}
	for i := 0; i < 2000; i += 7 {
		values = append(values, strconv.Itoa(i))
	}
	for _, v := range values {
		b, err := yamlv3.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(string(b), "\n")
		if got := render.YAMLScalar(v); got != want {
			t.Errorf("yamlScalar(%#v) = %q, yaml.v3 writes %q", v, got, want)
		}
	}
}

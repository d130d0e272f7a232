package cmd_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ssa/kubectl-ssa/cmd"
)

// result is what a command run printed and returned.
type result struct {
	out, errOut string
	code        int
	err         error
}

// run runs "kubectl ssa ARGS..." as typed, without a cluster.
func run(t *testing.T, args ...string) result {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	root := cmd.NewRootCmd(streams)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	r := result{out: out.String(), errOut: errOut.String(), err: err}
	var exit *cmd.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = int(exit.Code)
	case err != nil:
		r.code = 2
	}
	return r
}

// fieldPaths runs who-owns -o json and returns the paths of the fields.
func fieldPaths(t *testing.T, args ...string) []string {
	t.Helper()
	r := run(t, append([]string{"who-owns", "--local", "-f", "testdata/deployment.yaml", "-o", "json"}, args...)...)
	if r.err != nil {
		t.Fatalf("%v: %v\n%s", args, r.err, r.errOut)
	}
	var rep struct {
		Fields []struct {
			Path string `json:"path"`
		} `json:"fields"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, r.out)
	}
	paths := []string{}
	for _, f := range rep.Fields {
		paths = append(paths, f.Path)
	}
	return paths
}

// who-owns --field reads every form of the path language: keys written
// bare, positions, JSONPath, the apiserver's own form.
func TestWhoOwnsFieldForms(t *testing.T) {
	const web = `.spec.template.spec.containers[name="web"]`
	tests := []struct {
		name  string
		field string
		want  []string
	}{
		{name: "bare key, then *", field: ".spec.template.spec.containers[name=web].*", want: []string{web + ".image", web + ".name"}},
		{name: "a position", field: ".spec.template.spec.containers[0].image", want: []string{web + ".image"}},
		{name: "the second position", field: ".spec.template.spec.containers[1].image", want: []string{`.spec.template.spec.containers[name="sidecar"].image`}},
		{name: "JSONPath", field: `{.spec.template.spec.containers[?(@.name=="sidecar")].args}`, want: []string{`.spec.template.spec.containers[name="sidecar"].args`}},
		{name: "the apiserver's form", field: `.spec.template.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"]`, want: []string{web + `.ports[containerPort=80,protocol="TCP"]`}},
		{name: "the apiserver's form of a dotted label", field: ".metadata.labels.app.kubernetes.io/name", want: []string{".metadata.labels.app.kubernetes.io/name"}},
		{name: "a quoted dotted label", field: `.metadata.labels["app.kubernetes.io/name"]`, want: []string{".metadata.labels.app.kubernetes.io/name"}},
		{name: "no leading dot", field: "spec.replicas", want: []string{".spec.replicas"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fieldPaths(t, "--field", tt.field)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("--field %s (-want +got):\n%s", tt.field, diff)
			}
		})
	}
}

func TestWhoOwnsFieldSyntaxError(t *testing.T) {
	r := run(t, "who-owns", "--local", "-f", "testdata/deployment.yaml", "--field", ".spec.containers[name]")
	if r.code != 2 || r.err == nil || !strings.Contains(r.err.Error(), `key "name" has no value`) {
		t.Errorf("exit %d, error %v; want 2 and the syntax error", r.code, r.err)
	}
}

// A --field path that is nowhere in the object is a mistake, not an
// empty answer: one error line naming the object, exit 2. A path that is
// there but owned by nobody, or not by the managers asked for, is not.
func TestWhoOwnsFieldMatchingNothing(t *testing.T) {
	one := []string{"who-owns", "--local", "-f", "testdata/deployment.yaml"}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "mistyped", args: []string{"--field", ".spec.replicaz"}, wantErr: "--field .spec.replicaz matches no field of Deployment/shop/web: check the path with -o tree (owned fields) or --unowned"},
		{name: "mistyped pattern", args: []string{"--field", ".spec.templat.**", "-o", "tree"}, wantErr: "--field .spec.templat.** matches no field of Deployment/shop/web"},
		{name: "one of two mistyped", args: []string{"--field", ".spec.replicas", "--field", ".spec.replicaz"}, wantErr: "--field .spec.replicaz matches no field"},
		{name: "over two objects", args: []string{"-f", "testdata/configmap.yaml", "--field", ".spec.replicaz"}, wantErr: "--field .spec.replicaz matches no field of 2 objects"},
		{name: "identity", args: []string{"--field", ".metadata.name"}},
		{name: "there, but not this manager's", args: []string{"--field", ".spec.replicas", "--manager", "nobody"}},
		{name: "in one of two objects", args: []string{"-f", "testdata/configmap.yaml", "--field", ".data.*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append(append([]string{}, one...), tt.args...)...)
			if tt.wantErr == "" {
				if r.err != nil {
					t.Fatalf("exit %d: %v", r.code, r.err)
				}
				return
			}
			if r.code != 2 || r.err == nil || !strings.HasPrefix(r.err.Error(), tt.wantErr) || r.out != "" {
				t.Errorf("exit %d, error %v, stdout %q; want 2 and %q", r.code, r.err, r.out, tt.wantErr)
			}
		})
	}
}

// Over many objects, a filter that matches nothing says so once, in every
// view; JSON is an empty List.
func TestWhoOwnsNothingMatchesSaysSoOnce(t *testing.T) {
	files := []string{"who-owns", "--local", "-f", "testdata/deployment.yaml", "-f", "testdata/configmap.yaml"}
	tests := []struct {
		name       string
		args       []string
		wantOut    string
		wantErrOut string
	}{
		{name: "table", args: []string{"--manager", "nobody"}, wantErrOut: "no fields match, in all 2 objects\n"},
		{name: "shared", args: []string{"--shared", "--field", ".metadata.labels.*"}, wantErrOut: "no fields match, in all 2 objects\n"},
		{name: "shared, nothing else", args: []string{"--shared", "--operation", "Update", "--subresource", "scale"}, wantErrOut: "no fields match, in all 2 objects\n"},
		{name: "managers", args: []string{"--manager", "nobody", "-o", "managers"}, wantErrOut: "no managers match, in all 2 objects\n"},
		{name: "blame", args: []string{"--manager", "nobody", "-o", "blame"}, wantErrOut: "no fields match, in all 2 objects\n"},
		{name: "tree", args: []string{"--field", ".metadata.labels.*", "--manager", "nobody", "-o", "tree"}, wantErrOut: "no fields match, in all 2 objects\n"},
		{name: "json", args: []string{"--manager", "nobody", "-o", "json"}, wantOut: "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"items\": []\n}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append(append([]string{}, files...), tt.args...)...)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if diff := cmp.Diff(tt.wantOut, r.out); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantErrOut, r.errOut); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

// -o blame applies --manager, --field, --shared and --unowned as the
// table does: only the lines they select show, under the lines that hold
// them.
func TestWhoOwnsBlameFilters(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     []string
		wantNone []string
	}{
		{name: "manager", args: []string{"--manager", "kubectl-label"}, want: []string{"kubectl-label (Update) │     tier: frontend"}, wantNone: []string{"platform", "replicas:", "status:"}},
		{name: "field", args: []string{"--field", ".spec.replicas"}, want: []string{"kubectl (Update /scale) │   replicas: 3", "│ spec:"}, wantNone: []string{"platform", "template:"}},
		{name: "shared", args: []string{"--shared"}, want: []string{"platform (Apply), team-a (Apply) │         image: nginx:1.27"}, wantNone: []string{"busybox", "kubectl-label"}},
		{name: "unowned", args: []string{"--unowned", "--field", ".spec.strategy.**"}, want: []string{"(unowned) │     type: RollingUpdate"}, wantNone: []string{"platform", "replicas"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append([]string{"who-owns", "--local", "-f", "testdata/deployment.yaml", "-o", "blame", "--time", "none"}, tt.args...)...)
			if r.err != nil {
				t.Fatal(r.err)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.out, w) {
					t.Errorf("output lacks %q:\n%s", w, r.out)
				}
			}
			for _, w := range tt.wantNone {
				if strings.Contains(r.out, w) {
					t.Errorf("output has %q, which the filter leaves out:\n%s", w, r.out)
				}
			}
		})
	}
}

// Manager names a command writes are checked as the apiserver checks
// fieldManager, before anything is read or written.
func TestManagerNamesAreValidated(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "migrate, empty --field-manager", args: []string{"migrate", "deploy/web", "--field-manager="}, wantErr: "--field-manager: the manager name is empty"},
		{name: "migrate, a newline", args: []string{"migrate", "deploy/web", "--field-manager=ci\ndeploy"}, wantErr: `--field-manager: "ci\ndeploy" is not a manager name the apiserver takes`},
		{name: "migrate, too long", args: []string{"migrate", "deploy/web", "--field-manager=" + strings.Repeat("x", 129)}, wantErr: "129 bytes long"},
		{name: "handover --to", args: []string{"handover", "deploy/web", "--field", ".spec.replicas", "--from", "kubectl", "--to", "argo\x1b[2J"}, wantErr: `--to: "argo\x1b[2J" is not a manager name`},
		{name: "handover --temp-manager", args: []string{"handover", "deploy/web", "--field", ".spec.replicas", "--from", "kubectl", "--to", "kube-controller-manager", "--temp-manager", ""}, wantErr: "--temp-manager: the manager name is empty"},
		{name: "explain-conflict --field-manager", args: []string{"explain-conflict", "-f", "testdata/deployment.yaml", "--field-manager", "ci\tdeploy"}, wantErr: `--field-manager: "ci\tdeploy" is not a manager name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.args...)
			if r.code != 2 || r.err == nil || !strings.Contains(r.err.Error(), tt.wantErr) {
				t.Errorf("exit %d, error %v; want 2 and an error containing %q", r.code, r.err, tt.wantErr)
			}
		})
	}
}

// rawControl returns the control characters in s other than newlines and
// tabs, quoted, or "".
func rawControl(s string) string {
	var found []string
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			found = append(found, fmt.Sprintf("%U", r))
		}
	}
	return strings.Join(found, " ")
}

// Control characters in manager names, subresources and values never
// reach the terminal raw, in any view.
func TestWhoOwnsEscapesControlCharacters(t *testing.T) {
	for _, view := range []string{"table", "wide", "blame", "tree", "managers"} {
		t.Run(view, func(t *testing.T) {
			r := run(t, "who-owns", "--local", "-f", "testdata/control-chars.yaml", "-o", view, "--color", "never")
			if r.err != nil {
				t.Fatal(r.err)
			}
			if raw := rawControl(r.out + r.errOut); raw != "" {
				t.Errorf("raw control characters %s in:\n%s", raw, r.out)
			}
			if !strings.Contains(r.out, `ci\ndeploy^[]0;pwned\u0007`) {
				t.Errorf("the manager name is not shown escaped:\n%s", r.out)
			}
		})
	}
}

// explain-conflict's suggested commands stay one pasteable line each: a
// newline in a manager name is quoted as bash reads it, $'...'.
func TestExplainConflictQuotesSuggestedCommands(t *testing.T) {
	r := run(t, "explain-conflict", "--local", "--live-file", "testdata/control-chars.yaml", "-f", "testdata/control-chars-apply.yaml")
	if r.code != 1 {
		t.Fatalf("exit %d (%v), want 1 (conflicts):\n%s%s", r.code, r.err, r.out, r.errOut)
	}
	if raw := rawControl(r.out); raw != "" {
		t.Errorf("raw control characters %s in:\n%s", raw, r.out)
	}
	for _, want := range []string{
		`     $ kubectl ssa handover configmap/settings -n shop --field .data.color --from $'ctl\rFAKE' --from-subresource $'sta\x1b[8mtus' --to kubectl --mode applier` + "\n",
		`     $ kubectl ssa handover configmap/settings -n shop --field .data.mode --from $'ci\ndeploy\x1b]0;pwned\x07' --to kubectl --mode applier` + "\n",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks the command\n%s\nin:\n%s", want, r.out)
		}
	}
}

// handover reads --field in the same language as who-owns, and checks it
// before reading any object.
func TestHandoverFieldSyntax(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	t.Setenv("HOME", t.TempDir())
	for _, tt := range []struct {
		field, wantErr string
	}{
		{field: ".spec.template.**", wantErr: "* is a wildcard, and a path names one field"},
		{field: ".spec.containers[*].image", wantErr: "[*] is a wildcard"},
		{field: ".spec.containers[name]", wantErr: `key "name" has no value`},
		{field: `{.spec.template.spec.containers[?(@.name=="app")].image}`},
		{field: ".spec.template.spec.containers[0].image"},
		{field: `.metadata.labels["app.kubernetes.io/name"]`},
		{field: "spec.replicas"},
	} {
		t.Run(tt.field, func(t *testing.T) {
			r := run(t, "handover", "deploy/web", "--field", tt.field, "--from", "kubectl", "--to", "argocd-controller")
			if r.err == nil {
				t.Fatal("no error without a cluster")
			}
			fieldErr := strings.Contains(r.err.Error(), "--field")
			switch {
			case tt.wantErr == "" && fieldErr:
				t.Errorf("a path handover should read: %v", r.err)
			case tt.wantErr != "" && (!fieldErr || !strings.Contains(r.err.Error(), tt.wantErr) || r.code != 2):
				t.Errorf("exit %d, error %v; want 2 and %q", r.code, r.err, tt.wantErr)
			}
		})
	}
}

// -o managers lists the managers of what --field, --shared and --unowned
// select, as the other views show only those fields.
func TestWhoOwnsManagersFollowFieldFilters(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "field", args: []string{"--field", ".spec.replicas"}, want: []string{"kubectl"}},
		{name: "shared", args: []string{"--shared"}, want: []string{"platform", "team-a"}},
		{name: "field and manager", args: []string{"--field", ".metadata.labels.*", "--manager", "kubectl-*"}, want: []string{"kubectl-label"}},
		{name: "no filter", args: nil, want: []string{"platform", "team-a", "kubectl", "kube-controller-manager", "kubectl-label"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append([]string{"who-owns", "--local", "-f", "testdata/deployment.yaml", "-o", "managers", "--time", "none"}, tt.args...)...)
			if r.err != nil {
				t.Fatal(r.err)
			}
			got := []string{}
			for _, line := range strings.Split(strings.TrimSpace(r.out), "\n")[2:] {
				got = append(got, strings.Fields(line)[0])
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("managers (-want +got):\n%s\n%s", diff, r.out)
			}
		})
	}
}

// A long default table of one object points to the tree view on stderr;
// stdout is the table as ever, and -o table asked for gets no note.
func TestWhoOwnsLongTableHint(t *testing.T) {
	var data, fields []string
	for i := 0; i < 150; i++ {
		data = append(data, fmt.Sprintf("    k%03d: v", i))
		fields = append(fields, fmt.Sprintf(`"f:k%03d":{}`, i))
	}
	file := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n  namespace: shop\n  managedFields:\n  - manager: bulk\n    operation: Apply\n    apiVersion: v1\n    fieldsType: FieldsV1\n    fieldsV1: {\"f:data\":{"+strings.Join(fields, ",")+"}}\ndata:\n"+strings.Join(data, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, "who-owns", "--local", "-f", file)
	if r.err != nil || !strings.Contains(r.out, ".data.k149") {
		t.Fatalf("%v, stdout:\n%s", r.err, r.out)
	}
	if want := "note: 150 rows; -o tree shows the same ownership in "; !strings.HasPrefix(r.errOut, want) || strings.Count(r.errOut, "\n") != 1 {
		t.Errorf("stderr %q, want one line starting %q", r.errOut, want)
	}
	if r := run(t, "who-owns", "--local", "-f", file, "-o", "table"); r.errOut != "" {
		t.Errorf("-o table: stderr %q", r.errOut)
	}
}

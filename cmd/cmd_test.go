package cmd_test

import (
	"context"
	"encoding/json"
	"errors"
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
		r.code = exit.Code
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

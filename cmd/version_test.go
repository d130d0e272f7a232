package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// fakeServer answers /version with gitVersion and counts the requests.
func fakeServer(t *testing.T, gitVersion string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		v, _ := json.Marshal(gitVersion)
		fmt.Fprintf(w, `{"major":"1","minor":"x","gitVersion":%s,"platform":"linux/amd64"}`, v)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func runVersion(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	// No kubeconfig of the developer's may leak into the test.
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "absent"))
	t.Setenv("HOME", t.TempDir())
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	root := NewRootCmd(streams)
	root.SetArgs(append([]string{"version"}, args...))
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func TestVersionServer(t *testing.T) {
	tests := []struct {
		name       string
		server     string // the server's gitVersion; "" for no server at all
		args       []string
		wantOut    []string
		wantErrOut string // a substring of stderr; "" for an empty stderr
		wantErr    string // the error, an exit 2
		wantHits   int32
	}{
		{
			name:     "same minor is exact",
			server:   "v1.37.1",
			wantOut:  []string{"kubectl-ssa ", "\nserver v1.37.1 (exact: verified against a real apiserver of this minor)\n"},
			wantHits: 1,
		},
		{
			name:     "a distribution's suffix is the same minor",
			server:   "v1.37.0-gke.1200",
			wantOut:  []string{"\nserver v1.37.0-gke.1200 (exact: verified against a real apiserver of this minor)\n"},
			wantHits: 1,
		},
		{
			name:     "a verified older minor is exact",
			server:   "v1.36.4",
			wantOut:  []string{"\nserver v1.36.4 (exact: verified against a real apiserver of this minor)\n"},
			wantHits: 1,
		},
		{
			// structured-merge-diff v6.3.2's kept {} is predicted for
			// these patches (conflict.KeepsEmptiedMaps), measured on 1.36.1.
			name:     "1.36.0-1.36.2 are exact: their kept {} is predicted",
			server:   "v1.36.1",
			wantOut:  []string{"\nserver v1.36.1 (exact: verified against a real apiserver of this minor)\n"},
			wantHits: 1,
		},
		{
			name:     "the oldest verified minor is exact",
			server:   "v1.34.4",
			wantOut:  []string{"\nserver v1.34.4 (exact: verified against a real apiserver of this minor)\n"},
			wantHits: 1,
		},
		{
			name:       "a minor no test bed runs warns",
			server:     "v1.32.9",
			wantOut:    []string{"\nserver v1.32.9 (untested)\n"},
			wantErrOut: "warning: Kubernetes 1.32 is not verified here (no test bed of it can be built; 1.34-1.37 are)",
			wantHits:   1,
		},
		{
			name:       "newer minor warns",
			server:     "v1.38.0",
			wantOut:    []string{"\nserver v1.38.0 (untested)\n"},
			wantErrOut: "Kubernetes 1.38 is newer or untested (verified: 1.34, 1.35, 1.36, 1.37)",
			wantHits:   1,
		},
		{
			name:     "an escape sequence in the server's version is not written to the terminal",
			server:   "v1.36.3\x1b[31m",
			wantOut:  []string{"\nserver v1.36.3^[[31m (exact: verified against a real apiserver of this minor)\n"},
			wantHits: 1,
		},
		{
			name:     "--client does not contact the server",
			server:   "v1.37.1",
			args:     []string{"--client"},
			wantOut:  []string{"kubectl-ssa "},
			wantHits: 0,
		},
		{
			name:    "no kubeconfig: the client version and an error",
			wantOut: []string{"kubectl-ssa "},
			wantErr: "server version unknown: no kubeconfig (KUBECONFIG, ~/.kube/config or --kubeconfig) and no --server (--client prints the client's alone)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			var hits *atomic.Int32
			if tt.server != "" {
				var srv *httptest.Server
				srv, hits = fakeServer(t, tt.server)
				args = append(args, "--server", srv.URL)
			}
			out, errOut, err := runVersion(t, args...)
			if tt.wantErr != "" {
				var exit *ExitError
				if !errors.As(err, &exit) || exit.Code != CodeError || err.Error() != tt.wantErr {
					t.Fatalf("version %v: got %v, want exit 2 with %q", args, err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatalf("version %v: %v", args, err)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(out, want) {
					t.Errorf("stdout %q lacks %q", out, want)
				}
			}
			if tt.wantErrOut == "" && errOut != "" {
				t.Errorf("stderr %q, want none", errOut)
			}
			if !strings.Contains(errOut, tt.wantErrOut) {
				t.Errorf("stderr %q lacks %q", errOut, tt.wantErrOut)
			}
			if hits != nil && hits.Load() != tt.wantHits {
				t.Errorf("%d requests to the server, want %d", hits.Load(), tt.wantHits)
			}
			if tt.server == "" && strings.Contains(out, "\nserver ") {
				t.Errorf("stdout %q has a server line without a server", out)
			}
		})
	}
}

func TestVersionUnreachableServer(t *testing.T) {
	srv, _ := fakeServer(t, "v1.37.1")
	srv.Close()
	out, _, err := runVersion(t, "--server", srv.URL, "-o", "json")
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Code != CodeError || !strings.Contains(err.Error(), "server version unknown: ") || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("got %v, want exit 2 saying the server %s is unreachable", err, srv.URL)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if _, ok := v["serverVersion"]; ok {
		t.Errorf("serverVersion present without a server: %s", out)
	}
}

func TestVersionStamped(t *testing.T) {
	defer func(v, c, d string) { version, gitCommit, buildDate = v, c, d }(version, gitCommit, buildDate)
	version, gitCommit, buildDate = "v0.1.0", "3f684b1", "2026-11-23T09:12:00Z"
	srv, _ := fakeServer(t, "v1.37.1")

	out, _, err := runVersion(t, "--client")
	if err != nil {
		t.Fatal(err)
	}
	if want := "kubectl-ssa v0.1.0 (commit 3f684b1, built 2026-11-23T09:12:00Z, go"; !strings.HasPrefix(out, want) {
		t.Errorf("stdout %q, want it to start with %q", out, want)
	}

	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			out, _, err := runVersion(t, "--server", srv.URL, "-o", format)
			if err != nil {
				t.Fatal(err)
			}
			if format == "yaml" {
				for _, want := range []string{"kind: Version\n", "gitVersion: v1.37.1\n", "serverSupport: exact\n", "buildDate: \"2026-11-23T09:12:00Z\"\n"} {
					if !strings.Contains(out, want) {
						t.Errorf("-o yaml lacks %q:\n%s", want, out)
					}
				}
				return
			}
			var got v1alpha1.Version
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			want := v1alpha1.Version{TypeMeta: v1alpha1.TypeMeta{APIVersion: "ssa.kubectl-ssa.io/v1alpha1", Kind: "Version"}, Version: "v0.1.0", GitCommit: "3f684b1", BuildDate: "2026-11-23T09:12:00Z", EngineKubernetesVersion: "1.37", ServerSupport: v1alpha1.ServerExact}
			got.GoVersion, got.Platform, got.Libraries = "", "", nil
			if got.ServerVersion == nil || got.ServerVersion.GitVersion != "v1.37.1" || got.ServerVersion.Platform != "linux/amd64" {
				t.Errorf("serverVersion %+v, want gitVersion v1.37.1 on linux/amd64", got.ServerVersion)
			}
			got.ServerVersion = nil
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("-o json (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVersionBadOutput(t *testing.T) {
	srv, hits := fakeServer(t, "v1.37.1")
	_, _, err := runVersion(t, "--server", srv.URL, "-o", "table")
	var exit *ExitError
	if err == nil || (errors.As(err, &exit) && exit.Code != CodeError) || !strings.Contains(err.Error(), `--output must be json, yaml, jsonpath=..., go-template=... or empty, not "table"`) {
		t.Errorf("version -o table: %v, want exit 2 naming the formats", err)
	}
	if hits.Load() != 0 {
		t.Error("the server was contacted before the flags were validated")
	}
}

// The engine's Kubernetes minor follows the k8s.io/apimachinery of go.mod.
func TestEngineVersion(t *testing.T) {
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/apimachinery v0\.(\d+)\.`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod requires no k8s.io/apimachinery v0.x")
	}
	if want := "1." + string(m[1]); engineKubernetesVersion != want {
		t.Errorf("engineKubernetesVersion is %q, go.mod's k8s.io/apimachinery is Kubernetes %s", engineKubernetesVersion, want)
	}
}

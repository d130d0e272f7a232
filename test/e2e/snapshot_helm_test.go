package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/rand"
)

// secretChart writes a chart that renders a Secret from a value marked
// secret (password, with a default of its own) and a ConfigMap.
func secretChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "web")
	files := map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"values.yaml": "password: " + helmChartPassword + "\ngreeting: hello\n",
		"templates/secret.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: web-credentials
type: Opaque
data:
  password: {{ .Values.password | b64enc }}
stringData:
  user: admin-{{ .Values.password }}
`,
		"templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  greeting: {{ .Values.greeting }}\n",
	}
	return writeChart(t, dir, files)
}

// TestSnapshotHelmRelease: a release installed by helm (server-side,
// client-side, and kept in ConfigMaps) with a Secret rendered from a
// value; a snapshot taken by a read-only account keeps the release with
// no Secret value nor user value, and diff and explain-conflict of the
// release, and of upgrade renders (the Secret the same, and changed), say
// from the snapshot with no cluster what they say live, with the same
// exit code.
func TestSnapshotHelmRelease(t *testing.T) {
	for _, tc := range []struct {
		name, driver string
		serverSide   bool
	}{{"server-side", "secret", true}, {"client-side", "secret", false}, {"configmap", "configmap", true}} {
		t.Run(tc.name, func(t *testing.T) {
			// helm and kubectl-ssa both read it.
			t.Setenv("HELM_DRIVER", tc.driver)
			ns := namespace(t)
			chart := secretChart(t)
			old, next := "snap-old-"+rand.String(12), "snap-new-"+rand.String(12)
			helmRun(t, "install", "web", chart, "-n", ns, "--server-side="+strconv.FormatBool(tc.serverSide), "--set", "password="+old)
			file := takeSnapshot(t, readOnlyKubeconfig(t, ns), ns, "secrets,configmaps")
			snapshotLeaks(t, file, ns, tc.driver+"s", old)
			dir := t.TempDir()
			same, changed := filepath.Join(dir, "same.yaml"), filepath.Join(dir, "changed.yaml")
			writeFile(t, same, helmRun(t, "template", "web", chart, "-n", ns, "--set", "password="+old, "--set", "greeting=hi"))
			writeFile(t, changed, helmRun(t, "template", "web", chart, "-n", ns, "--set", "password="+next))
			nowhere := nowhereKubeconfig(t)
			for _, args := range [][]string{{"diff"}, {"diff", "-f", same}, {"diff", "-f", changed},
				{"explain-conflict", "-f", same}, {"explain-conflict", "-f", changed}} {
				args = append(args, "-n", ns, "--helm-release", "web", "-o", "json")
				live := ssa(t, args...)
				off := ssa(t, append(args, "--snapshot", file, "--kubeconfig", nowhere)...)
				if live.code > 1 || off.code != live.code || !reflect.DeepEqual(withoutSnapshot(t, off.stdout), withoutSnapshot(t, live.stdout)) {
					t.Errorf("%v: from the snapshot exit %d, live exit %d\n--- snapshot:\n%s%s\n--- live:\n%s%s", args, off.code, live.code, off.stdout, off.stderr, live.stdout, live.stderr)
				}
				for _, v := range []string{old, next, helmChartPassword} {
					if out := off.stdout + off.stderr; strings.Contains(out, v) || strings.Contains(out, base64.StdEncoding.EncodeToString([]byte(v))) {
						t.Errorf("%v from the snapshot prints a Secret value\n%s", args, out)
					}
				}
			}
		})
	}
}

// withoutSnapshot is a JSON report without what it says of the snapshot
// it was predicted from, nor the times of the managed fields an apply
// writes (now: two runs may be a second apart).
func withoutSnapshot(t *testing.T, out string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	var strip func(any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "snapshot")
			delete(v, "time")
			for _, x := range v {
				strip(x)
			}
		case []any:
			for _, x := range v {
				strip(x)
			}
		}
	}
	strip(v)
	return v
}

// snapshotLeaks fails t if the snapshot file (as written, decompressed,
// and the release it keeps, decoded) holds the user's value or the
// chart's default, in clear or in base64, or the release's values or
// chart at all.
func snapshotLeaks(t *testing.T, file, ns, storage, value string) {
	t.Helper()
	raw, plain := snapshotBytes(t, file)
	var snap struct {
		Lists []struct {
			Resource string           `json:"resource"`
			Items    []map[string]any `json:"items"`
		} `json:"lists"`
	}
	if err := json.Unmarshal(plain, &snap); err != nil {
		t.Fatal(err)
	}
	var release []byte
	for _, l := range snap.Lists {
		for _, it := range l.Items {
			md, _ := it["metadata"].(map[string]any)
			data, _ := it["data"].(map[string]any)
			if l.Resource != storage || md["namespace"] != ns || md["name"] != "sh.helm.release.v1.web.v1" {
				continue
			}
			release = helmDecoded(t, data["release"], storage == "secrets")
		}
	}
	if release == nil {
		t.Fatalf("the snapshot holds no release %s sh.helm.release.v1.web.v1 in %s", storage, ns)
	}
	var rel map[string]any
	if err := json.Unmarshal(release, &rel); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"config", "chart", "hooks"} {
		if _, ok := rel[key]; ok {
			t.Errorf("the release kept holds its %s", key)
		}
	}
	if m, _ := rel["manifest"].(string); !strings.Contains(m, "name: web-credentials") || !strings.Contains(m, "hmac-sha256:") {
		t.Errorf("the release kept has no hashed Secret in its manifest:\n%s", m)
	}
	for name, b := range map[string][]byte{"file": raw, "decompressed": plain, "release": release} {
		for _, v := range []string{value, "admin-" + value, helmChartPassword} {
			if bytes.Contains(b, []byte(v)) || bytes.Contains(b, []byte(base64.StdEncoding.EncodeToString([]byte(v)))) {
				t.Errorf("the snapshot (%s) holds a Secret value", name)
			}
		}
	}
}

// snapshotBytes is a snapshot file as written, and decompressed.
func snapshotBytes(t *testing.T, file string) ([]byte, []byte) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return raw, gunzipped(t, raw)
}

// gunzipped is b decompressed.
func gunzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// helmDecoded is the JSON of the release a storage object's data.release
// holds: a Secret's base64, then Helm's base64 of gzip.
func helmDecoded(t *testing.T, v any, secret bool) []byte {
	t.Helper()
	s, _ := v.(string)
	if secret {
		outer, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		s = string(outer)
	}
	inner, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return gunzipped(t, inner)
}

package source

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"strings"
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/internal/helm"
	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// A Helm release kept by a snapshot, from a Secret or a ConfigMap: only
// what kubectl-ssa reads, its manifest's Secret values (a Secret's, and
// one in a List) as hashes, no values, chart or hooks; a release that
// can't be read is hashed whole; other ConfigMaps are kept as they are.
func TestSnapshotHelmRelease(t *testing.T) {
	const secret = "s3cret-value"
	b64 := base64.StdEncoding.EncodeToString([]byte(secret))
	manifest := "---\n# Source: web/templates/secret.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\ndata:\n  password: " + b64 + "\nstringData:\n  user: " + secret +
		"\n---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: more}\n  stringData: {token: " + secret + "}\n" +
		"---\n# Source: web/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  a: b\n"
	value, err := testkit.HelmRelease(map[string]any{"name": "web", "namespace": "a", "version": 1, "apply_method": "ssa",
		"info":   map[string]any{"status": "deployed", "notes": secret},
		"config": map[string]any{"password": secret}, "chart": map[string]any{"values": map[string]any{"password": secret}},
		"hooks": []any{map[string]any{"manifest": secret}}, "manifest": manifest})
	if err != nil {
		t.Fatal(err)
	}
	helmItem := func(data string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": "sh.helm.release.v1.web.v1", "labels": map[string]any{helm.LabelOwner: helm.Owner}},
			"type": helm.SecretType, "data": map[string]any{helm.DataKey: data}}
	}
	secrets := v1alpha1.SnapshotList{Version: "v1", Resource: "secrets", Items: []map[string]any{
		helmItem(base64.StdEncoding.EncodeToString([]byte(value))), helmItem(base64.StdEncoding.EncodeToString([]byte("not a release")))}}
	cms := v1alpha1.SnapshotList{Version: "v1", Resource: "configmaps", Items: []map[string]any{helmItem(value),
		{"metadata": map[string]any{"name": "plain"}, "data": map[string]any{"k": secret}}}}
	hashSecrets(&secrets, salt)
	hashSecrets(&cms, salt)
	for i, it := range []map[string]any{secrets.Items[0], cms.Items[0]} {
		data := it["data"].(map[string]any)[helm.DataKey].(string)
		if i == 0 {
			b, err := base64.StdEncoding.DecodeString(data)
			if err != nil {
				t.Fatal(err)
			}
			data = string(b)
		}
		r, err := helm.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		if r.Name != "web" || r.Version != 1 || r.Status() != helm.Deployed || !r.ServerSide() {
			t.Errorf("%d: the release kept is not the one read: %+v", i, r)
		}
		inner, _ := base64.StdEncoding.DecodeString(data)
		zr, err := gzip.NewReader(bytes.NewReader(inner))
		if err != nil {
			t.Fatal(err)
		}
		js, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		for _, leak := range []string{secret, b64, `"config"`, `"chart"`, `"hooks"`, `"notes"`} {
			if strings.Contains(string(js), leak) {
				t.Errorf("%d: the release kept holds %s:\n%s", i, leak, js)
			}
		}
		hash := HashValue(salt, []byte(secret))
		for _, want := range []string{"password: " + base64.StdEncoding.EncodeToString([]byte(hash)), "user: " + hash, "token: " + hash, "kind: ConfigMap", "name: web"} {
			if !strings.Contains(r.Manifest, want) {
				t.Errorf("%d: the manifest kept has no %q:\n%s", i, want, r.Manifest)
			}
		}
	}
	if got := secrets.Items[1]["data"].(map[string]any)[helm.DataKey]; !strings.HasPrefix(got.(string), v1alpha1.SecretHashPrefix) {
		t.Errorf("a release that can't be read is kept as %v, not hashed", got)
	}
	if got := cms.Items[1]["data"].(map[string]any)["k"]; got != secret {
		t.Errorf("a ConfigMap not Helm's is kept as %v", got)
	}
}

package conflict_test

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// A conflict on a Secret's stringData key says where the apiserver keeps
// its value (storedAs, in the JSON too); no other conflict does.
func TestStoredAs(t *testing.T) {
	tests := []struct {
		name, manifest, want string
	}{
		{"stringData", "{apiVersion: v1, kind: Secret, metadata: {name: tls, namespace: shop}, stringData: {tls.key: %s}}", `"storedAs":".data.tls.key"`},
		{"data", "{apiVersion: v1, kind: Secret, metadata: {name: tls, namespace: shop}, data: {tls.key: %s}}", ""},
		{"ConfigMap", "{apiVersion: v1, kind: ConfigMap, metadata: {name: tls, namespace: shop}, data: {tls.key: %s}}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			with := func(v string) string { return strings.Replace(tt.manifest, "%s", v, 1) }
			s := (&state{}).Run(t, apply{Manager: "cert-sync", Manifest: with("YWJj")})
			r, err := conflict.Simulate(conflict.Input{Live: s.Live, Applied: manifest(t, with("ZGVm")), FieldManager: "argocd-controller", Schema: conflict.BuiltinSchema()})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Conflicts) != 1 {
				t.Fatalf("conflicts: %+v", r.Conflicts)
			}
			b, err := json.Marshal(r.Conflicts[0])
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" && strings.Contains(string(b), "storedAs") || tt.want != "" && !strings.Contains(string(b), tt.want) {
				t.Errorf("want %q in %s", tt.want, b)
			}
		})
	}
}

// A Secret's values are hidden in what a reset replaced as in the
// conflicts; other fields' are not.
func TestRedactResetWas(t *testing.T) {
	data := fieldpath.MakePathOrDie("data", "password")
	typ := fieldpath.MakePathOrDie("type")
	r := &v1alpha1.ConflictReport{Reset: []v1alpha1.Reset{
		{Path: pathlang.Path(data), Value: "ZGVm", Was: anyOf("YWJj"), PathElements: data},
		{Path: pathlang.Path(typ), Value: "Opaque", Was: anyOf("kubernetes.io/tls"), PathElements: typ},
	}}
	r.Object = v1alpha1.ObjectRef{APIVersion: "v1", Kind: "Secret", Name: "db"}
	conflict.RedactSecrets(r)
	if *r.Reset[0].Was != v1alpha1.Redacted || r.Reset[0].Value != v1alpha1.Redacted {
		t.Errorf("data shown: %+v", r.Reset[0])
	}
	if *r.Reset[1].Was != "kubernetes.io/tls" {
		t.Errorf("type hidden: %+v", r.Reset[1])
	}
}

// anyOf is a report's optional value.
func anyOf(v any) *any { return &v }

package helm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSetMetadata(t *testing.T) {
	tests := []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		wantLabels  map[string]string
		wantAnns    map[string]string
	}{
		{
			name:       "an object without labels or annotations gets Helm's",
			wantLabels: map[string]string{ManagedByLabel: "Helm"},
			wantAnns:   map[string]string{ReleaseNameAnnotation: "web", ReleaseNamespaceAnnotation: "shop"},
		},
		{
			name:        "the chart's own are kept; Helm's values win over the chart's",
			labels:      map[string]string{"app": "web", ManagedByLabel: "Tiller"},
			annotations: map[string]string{"note": "x", ReleaseNameAnnotation: "other"},
			wantLabels:  map[string]string{"app": "web", ManagedByLabel: "Helm"},
			wantAnns:    map[string]string{"note": "x", ReleaseNameAnnotation: "web", ReleaseNamespaceAnnotation: "shop"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}}
			u.SetLabels(tt.labels)
			u.SetAnnotations(tt.annotations)
			SetMetadata(u, "web", "shop")
			if diff := cmp.Diff(tt.wantLabels, u.GetLabels()); diff != "" {
				t.Errorf("labels (-want +got)\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantAnns, u.GetAnnotations()); diff != "" {
				t.Errorf("annotations (-want +got)\n%s", diff)
			}
		})
	}
}

// Helm's words, as its users paste them from failed upgrades
// (pkg/action/validate.go, checkOwnership and requireValue).
func TestCheckOwnership(t *testing.T) {
	tests := []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		want        string
	}{
		{
			name: "made by hand: nothing names the release",
			want: `ConfigMap "extra" in namespace "shop" exists and cannot be imported into the current release: invalid ownership metadata; label validation error: missing key "app.kubernetes.io/managed-by": must be set to "Helm"; annotation validation error: missing key "meta.helm.sh/release-name": must be set to "web"; annotation validation error: missing key "meta.helm.sh/release-namespace": must be set to "shop"`,
		},
		{
			name:        "another release's",
			labels:      map[string]string{ManagedByLabel: "Helm"},
			annotations: map[string]string{ReleaseNameAnnotation: "other", ReleaseNamespaceAnnotation: "shop"},
			want:        `ConfigMap "extra" in namespace "shop" exists and cannot be imported into the current release: invalid ownership metadata; annotation validation error: key "meta.helm.sh/release-name" must equal "web": current value is "other"`,
		},
		{
			name:        "the release's: adopted",
			labels:      map[string]string{ManagedByLabel: "Helm", "app": "x"},
			annotations: map[string]string{ReleaseNameAnnotation: "web", ReleaseNamespaceAnnotation: "shop"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			u.SetKind("ConfigMap")
			u.SetName("extra")
			u.SetNamespace("shop")
			u.SetLabels(tt.labels)
			u.SetAnnotations(tt.annotations)
			if diff := cmp.Diff(tt.want, CheckOwnership(u, "web", "shop")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

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
			u := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]interface{}{"name": "c"}}}
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

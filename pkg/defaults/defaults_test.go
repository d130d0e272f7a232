package defaults_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
)

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	b, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	m := map[string]any{}
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return defaults.Normalize(m).(map[string]any)
}

func field(n string) fieldpath.PathElement { return fieldpath.PathElement{FieldName: &n} }

func key(name string) fieldpath.PathElement {
	return fieldpath.PathElement{Key: &value.FieldList{{Name: "name", Value: value.NewValueInterface(name)}}}
}

func path(elems ...any) fieldpath.Path {
	var p fieldpath.Path
	for _, e := range elems {
		switch t := e.(type) {
		case string:
			p = append(p, field(t))
		case fieldpath.PathElement:
			p = append(p, t)
		}
	}
	return p
}

// ancestors finds the values at p's prefixes, for list items by the key
// "name" or by index.
func ancestors(o map[string]any, p fieldpath.Path) []any {
	out := make([]any, len(p))
	var cur any = o
	for i, pe := range p {
		out[i] = cur
		switch {
		case pe.FieldName != nil:
			m, _ := cur.(map[string]any)
			cur = m[*pe.FieldName]
		case pe.Key != nil:
			l, _ := cur.([]any)
			want := (*pe.Key)[0].Value.AsString()
			cur = nil
			for _, it := range l {
				if m, _ := it.(map[string]any); m["name"] == want {
					cur = m
				}
			}
		case pe.Index != nil:
			l, _ := cur.([]any)
			cur = l[*pe.Index]
		}
	}
	return out
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  strategy: {type: Recreate}
  template:
    spec:
      hostNetwork: true
      containers:
      - name: latest
        image: nginx
      - name: pinned
        image: registry.example.com:5000/team/app:v2
        ports: [{containerPort: 8080}]
      - name: digest
        image: nginx@sha256:abababababababababababababababababababababababababababababababab
      - name: tagged-latest
        image: nginx:latest
      - name: invalid
        image: Nginx:1
`

func TestBuiltin(t *testing.T) {
	idx := func(i int) fieldpath.PathElement { return fieldpath.PathElement{Index: &i} }
	dep := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	tests := []struct {
		name   string
		gvk    schema.GroupVersionKind
		object string
		path   fieldpath.Path
		want   defaults.Answer
	}{
		{"constant", dep, deployment, path("spec", "template", "spec", "restartPolicy"), defaults.Answer{Outcome: defaults.Reset, Value: "Always"}},
		{"constant integer", dep, deployment, path("spec", "replicas"), defaults.Answer{Outcome: defaults.Reset, Value: int64(1)}},
		{"constant object", dep, deployment, path("spec", "template", "spec", "securityContext"), defaults.Answer{Outcome: defaults.Reset, Value: map[string]any{}}},
		{"nested defaults of a removed parent", dep, deployment, path("spec", "strategy"), defaults.Answer{Outcome: defaults.Reset, Value: map[string]any{
			"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"}}}},
		{"no default", dep, deployment, path("spec", "template", "spec", "containers", key("latest"), "args"), defaults.Answer{Outcome: defaults.Removed}},
		{"a list item has no default", dep, deployment, path("spec", "template", "spec", "containers", key("latest")), defaults.Answer{Outcome: defaults.Removed}},
		{"written as null is removed", dep, deployment, path("spec", "selector"), defaults.Answer{Outcome: defaults.Removed}},
		{"rule: no tag pulls always", dep, deployment, path("spec", "template", "spec", "containers", key("latest"), "imagePullPolicy"), defaults.Answer{Outcome: defaults.Reset, Value: "Always"}},
		{"rule: a tag pulls if not present", dep, deployment, path("spec", "template", "spec", "containers", key("pinned"), "imagePullPolicy"), defaults.Answer{Outcome: defaults.Reset, Value: "IfNotPresent"}},
		{"rule: a digest pulls if not present", dep, deployment, path("spec", "template", "spec", "containers", key("digest"), "imagePullPolicy"), defaults.Answer{Outcome: defaults.Reset, Value: "IfNotPresent"}},
		{"rule: :latest pulls always", dep, deployment, path("spec", "template", "spec", "containers", key("tagged-latest"), "imagePullPolicy"), defaults.Answer{Outcome: defaults.Reset, Value: "Always"}},
		{"rule: an invalid reference pulls if not present", dep, deployment, path("spec", "template", "spec", "containers", key("invalid"), "imagePullPolicy"), defaults.Answer{Outcome: defaults.Reset, Value: "IfNotPresent"}},
		{"templates do not default hostPort", dep, deployment, path("spec", "template", "spec", "containers", key("pinned"), "ports", idx(0), "hostPort"), defaults.Answer{Outcome: defaults.Removed}},
		{"when: no rolling update with Recreate", dep, deployment, path("spec", "strategy", "rollingUpdate"), defaults.Answer{Outcome: defaults.Removed}},
		{"when: rolling update when the type is removed too", dep, `{"spec":{"strategy":{}}}`, path("spec", "strategy", "rollingUpdate"), defaults.Answer{Outcome: defaults.Reset, Value: map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"}}},
		{"when: a value the generator never saw is not known", dep, `{"spec":{"strategy":{"type":"Sideways"}}}`, path("spec", "strategy", "rollingUpdate"), defaults.Answer{Outcome: defaults.Depends, Reason: "the value of type"}},
		{"pod: hostNetwork copies the container port", schema.GroupVersionKind{Version: "v1", Kind: "Pod"},
			`{"spec":{"hostNetwork":true,"containers":[{"name":"pinned","ports":[{"containerPort":8080}]}]}}`,
			path("spec", "containers", key("pinned"), "ports", idx(0), "hostPort"), defaults.Answer{Outcome: defaults.Reset, Value: int64(8080)}},
		{"pod: requests default to limits", schema.GroupVersionKind{Version: "v1", Kind: "Pod"},
			`{"spec":{"containers":[{"name":"latest","resources":{"limits":{"cpu":"1"},"requests":{"memory":"1Gi"}}}]}}`,
			path("spec", "containers", key("latest"), "resources", "requests", "cpu"), defaults.Answer{Outcome: defaults.Reset, Value: "1"}},
		{"service: targetPort copies port", schema.GroupVersionKind{Version: "v1", Kind: "Service"},
			`{"spec":{"ports":[{"name":"latest","port":80}]}}`,
			path("spec", "ports", key("latest"), "targetPort"), defaults.Answer{Outcome: defaults.Reset, Value: int64(80)}},
		{"service: session affinity config with ClientIP", schema.GroupVersionKind{Version: "v1", Kind: "Service"},
			`{"spec":{"sessionAffinity":"ClientIP"}}`,
			path("spec", "sessionAffinityConfig"), defaults.Answer{Outcome: defaults.Reset, Value: map[string]any{"clientIP": map[string]any{"timeoutSeconds": int64(10800)}}}},
		{"job: backoffLimit by backoffLimitPerIndex", schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"},
			`{"spec":{"backoffLimitPerIndex":1}}`,
			path("spec", "backoffLimit"), defaults.Answer{Outcome: defaults.Reset, Value: int64(2147483647)}},
		{"job: labels from the template when none are left", schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"},
			`{"metadata":{"labels":{}},"spec":{"template":{"metadata":{"labels":{"app":"x"}}}}}`,
			path("metadata", "labels", "app"), defaults.Answer{Outcome: defaults.Reset, Value: "x"}},
		{"job: not when others are left", schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"},
			`{"metadata":{"labels":{"team":"a"}},"spec":{"template":{"metadata":{"labels":{"app":"x"}}}}}`,
			path("metadata", "labels", "app"), defaults.Answer{Outcome: defaults.Removed}},
		{"a kind without defaults", schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, `{"data":{"a":"b"}}`, path("data", "a"), defaults.Answer{Outcome: defaults.Removed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, ok := defaults.Builtin(tt.gvk)
			if !ok {
				t.Fatalf("no data for %s", tt.gvk)
			}
			o := obj(t, tt.object)
			got := tab.Removal(tt.path, ancestors(o, tt.path))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Removal(%s) (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

func TestBuiltinUnknown(t *testing.T) {
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "example.com", Version: "v1", Kind: "Widget"},
		{Group: "apps", Version: "v9", Kind: "Deployment"},
	} {
		if _, ok := defaults.Builtin(gvk); ok {
			t.Errorf("%s: data for a kind the apiserver does not define", gvk)
		}
	}
	if src := defaults.BuiltinSource(); src == "" {
		t.Error("no source")
	}
}

func TestSplitPattern(t *testing.T) {
	got := defaults.SplitPattern(".spec.template.spec.containers[*].resources.requests.*")
	want := []string{"spec", "template", "spec", "containers", "[*]", "resources", "requests", "*"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseRejectsUnknownRule(t *testing.T) {
	_, err := defaults.Parse([]byte(`{"source":"x","kinds":{"v1/Pod":[{"path":".spec.x","default":"rule","rule":"nope"}]}}`))
	if err == nil {
		t.Error("want an error for an unknown rule")
	}
}

const widgetTypes = `types:
- name: widget
  map:
    fields:
    - name: spec
      type: {namedType: spec}
- name: spec
  map:
    fields:
    - name: size
      type: {scalar: string}
      default: m
    - name: tls
      type: {namedType: tls}
      default: {}
    - name: ports
      type:
        list:
          elementType: {namedType: port}
          elementRelationship: associative
          keys: [name]
    - name: labels
      type:
        map:
          elementType: {scalar: string}
- name: tls
  map:
    fields:
    - name: enabled
      type: {scalar: boolean}
      default: true
    - name: minVersion
      type: {scalar: string}
- name: port
  map:
    fields:
    - name: name
      type: {scalar: string}
    - name: protocol
      type: {scalar: string}
      default: TCP
    - name: number
      type: {scalar: numeric}
      default: 80
`

func TestStructural(t *testing.T) {
	parser, err := typed.NewParser(widgetTypes)
	if err != nil {
		t.Fatal(err)
	}
	name := "widget"
	src := defaults.Structural{Schema: &parser.Schema, Type: smdschema.TypeRef{NamedType: &name}}
	tests := []struct {
		name string
		path fieldpath.Path
		want defaults.Answer
	}{
		{"scalar default", path("spec", "size"), defaults.Answer{Outcome: defaults.Reset, Value: "m"}},
		{"object default completed by its fields' defaults", path("spec", "tls"), defaults.Answer{Outcome: defaults.Reset, Value: map[string]any{"enabled": true}}},
		{"default inside an object", path("spec", "tls", "enabled"), defaults.Answer{Outcome: defaults.Reset, Value: true}},
		{"no default", path("spec", "tls", "minVersion"), defaults.Answer{Outcome: defaults.Removed}},
		{"default inside a list item", path("spec", "ports", key("http"), "protocol"), defaults.Answer{Outcome: defaults.Reset, Value: "TCP"}},
		{"number default", path("spec", "ports", key("http"), "number"), defaults.Answer{Outcome: defaults.Reset, Value: int64(80)}},
		{"list item", path("spec", "ports", key("http")), defaults.Answer{Outcome: defaults.Removed}},
		{"map entry", path("spec", "labels", "a"), defaults.Answer{Outcome: defaults.Removed}},
		{"not in the schema", path("spec", "nope"), defaults.Answer{Outcome: defaults.Removed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, src.Removal(tt.path, nil)); diff != "" {
				t.Errorf("Removal(%s) (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

// An applied empty list gets the default where the defaulting tests its
// length (an HPA's metrics, generated "empty"); elsewhere it stays.
func TestCompleteEmpty(t *testing.T) {
	hpa, ok := defaults.Builtin(schema.GroupVersionKind{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"})
	if !ok {
		t.Fatal("no HPA table")
	}
	obj := map[string]any{"spec": map[string]any{"metrics": []any{}, "maxReplicas": int64(3),
		"scaleTargetRef": map[string]any{"kind": "Deployment", "name": "web"}}}
	hpa.Complete(obj)
	if m, _ := obj["spec"].(map[string]any)["metrics"].([]any); len(m) != 1 {
		t.Errorf("metrics: %v, want the default cpu metric", m)
	}
	deploy, _ := defaults.Builtin(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	obj = map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{}, "tolerations": []any{}}}}}
	deploy.Complete(obj)
	spec := obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	if l, _ := spec["tolerations"].([]any); l == nil || len(l) != 0 {
		t.Errorf("tolerations: %v, want [] left as it is", spec["tolerations"])
	}
}

// A null field is absent to the defaulting (it decodes to nil): an
// applied clientIP: {} the field manager leaves null gets its default.
func TestCompleteNull(t *testing.T) {
	svc, _ := defaults.Builtin(schema.GroupVersionKind{Version: "v1", Kind: "Service"})
	obj := map[string]any{"spec": map[string]any{"sessionAffinity": "ClientIP", "sessionAffinityConfig": map[string]any{"clientIP": nil}}}
	svc.Complete(obj)
	cfg := obj["spec"].(map[string]any)["sessionAffinityConfig"].(map[string]any)
	if ip, _ := cfg["clientIP"].(map[string]any); ip == nil || ip["timeoutSeconds"] == nil {
		t.Errorf("sessionAffinityConfig %v, want clientIP.timeoutSeconds defaulted", cfg)
	}
}

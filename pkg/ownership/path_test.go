package ownership_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

func field(name string) fieldpath.PathElement { return fieldpath.PathElement{FieldName: &name} }

func key(kv ...interface{}) fieldpath.PathElement {
	var fl value.FieldList
	for i := 0; i < len(kv); i += 2 {
		fl = append(fl, value.Field{Name: kv[i].(string), Value: value.NewValueInterface(kv[i+1])})
	}
	fl.Sort()
	return fieldpath.PathElement{Key: &fl}
}

func val(v interface{}) fieldpath.PathElement {
	return fieldpath.ValueElement(value.NewValueInterface(v))
}

func path(pes ...fieldpath.PathElement) fieldpath.Path { return fieldpath.Path(pes) }

// labelled holds the field names with dots and slashes that the apiserver's
// path format leaves ambiguous.
var labelled = map[string]interface{}{
	"metadata": map[string]interface{}{
		"labels": map[string]interface{}{
			"app":                    "x",
			"app.kubernetes.io/name": "web",
		},
		"annotations": map[string]interface{}{"a.b": map[string]interface{}{"c": "nested, to prove the longest key wins only where it exists"}},
	},
	"data": map[string]interface{}{"log.level": "info", "app.properties": "x"},
	"spec": map[string]interface{}{
		"containers": []interface{}{
			map[string]interface{}{"name": "web", "env": []interface{}{map[string]interface{}{"name": "A.B", "value": "1"}}},
		},
	},
}

func TestParsePathRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		path    fieldpath.Path
		objects []interface{}
	}{
		{name: "fields", path: path(field("spec"), field("replicas"))},
		{name: "index", path: path(field("spec"), field("args"), fieldpath.IndexElement(3))},
		{name: "one string key", path: path(field("spec"), field("containers"), key("name", "web"), field("image"))},
		{name: "two keys, int and string", path: path(field("ports"), key("containerPort", int64(80), "protocol", "TCP"), field("protocol"))},
		{name: "key with quotes, commas, brackets and equals", path: path(field("env"), key("name", `a,b]="c"\d`))},
		{name: "key of three fields, bool", path: path(field("x"), key("a", true, "b", int64(-2), "c", "z"))},
		{name: "set value string", path: path(field("metadata"), field("finalizers"), val("example.com/keep"))},
		{name: "set value with a dot and brackets", path: path(field("f"), val("a.b[0]"))},
		{name: "set value int", path: path(field("ports"), val(int64(443)))},
		{name: "set value float", path: path(field("weights"), val(0.5))},
		{name: "the item itself then a field below an index", path: path(field("l"), fieldpath.IndexElement(0), field("m"))},
		{name: "list of lists", path: path(field("matrix"), fieldpath.IndexElement(1), fieldpath.IndexElement(0))},
		{name: "label with dots and a slash", path: path(field("metadata"), field("labels"), field("app.kubernetes.io/name")), objects: []interface{}{labelled}},
		{name: "label that prefixes another", path: path(field("metadata"), field("labels"), field("app")), objects: []interface{}{labelled}},
		{name: "dotted key then a plain child", path: path(field("metadata"), field("annotations"), field("a.b"), field("c")), objects: []interface{}{labelled}},
		{name: "dotted key of a ConfigMap", path: path(field("data"), field("log.level")), objects: []interface{}{labelled}},
		{name: "dotted field inside a keyed item", path: path(field("spec"), field("containers"), key("name", "web"), field("env"), key("name", "A.B"), field("value")), objects: []interface{}{labelled}},
		{name: "dotted key found in the second object", path: path(field("data"), field("app.properties")), objects: []interface{}{map[string]interface{}{}, labelled}},
		{name: "empty path", path: path()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.path.String()
			got, err := ownership.ParsePath(s, tt.objects...)
			if err != nil {
				t.Fatalf("ParsePath(%q): %v", s, err)
			}
			if !got.Equals(tt.path) {
				t.Errorf("ParsePath(%q) = %s (%d elements), want %d elements", s, got, len(got), len(tt.path))
			}
		})
	}
}

// Without objects a dot always starts a field: the apiserver's format can't
// say otherwise.
func TestParsePathWithoutObjects(t *testing.T) {
	got, err := ownership.ParsePath(".metadata.labels.app.kubernetes.io/name")
	if err != nil {
		t.Fatal(err)
	}
	want := path(field("metadata"), field("labels"), field("app"), field("kubernetes"), field("io/name"))
	if !got.Equals(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestParsePathErrors(t *testing.T) {
	tests := []struct {
		name, in, wantIn string
	}{
		{name: "no leading dot", in: "spec.replicas", wantIn: `unexpected 's' at 0`},
		{name: "unclosed bracket", in: ".spec.containers[name=\"web\"", wantIn: "unclosed ["},
		{name: "unclosed quote", in: `.env[name="a]`, wantIn: "unclosed ["},
		{name: "key without value", in: ".spec.containers[name]", wantIn: `key "name" has no value`},
		{name: "unreadable value", in: ".f[=abc]", wantIn: `cannot read value "abc"`},
		{name: "garbage after a bracket", in: ".a[0]b", wantIn: `unexpected 'b'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ownership.ParsePath(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("ParsePath(%q) error = %v, want one containing %q", tt.in, err, tt.wantIn)
			}
		})
	}
}

func TestDisplayPath(t *testing.T) {
	tests := []struct {
		name string
		path fieldpath.Path
		want string
	}{
		{name: "plain fields", path: path(field("spec"), field("replicas")), want: ".spec.replicas"},
		{name: "dotted and slashed names are quoted", path: path(field("metadata"), field("labels"), field("app.kubernetes.io/name")), want: `.metadata.labels["app.kubernetes.io/name"]`},
		{name: "dashes and underscores stay plain", path: path(field("x-y_z$")), want: ".x-y_z$"},
		{name: "a name starting with a digit is quoted", path: path(field("data"), field("1st")), want: `.data["1st"]`},
		{name: "keys, values and indices as the apiserver writes them", path: path(field("c"), key("name", "web"), field("p"), val("v"), fieldpath.IndexElement(2)), want: `.c[name="web"].p[="v"][2]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ownership.DisplayPath(tt.path); got != tt.want {
				t.Errorf("DisplayPath = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	obj := map[string]interface{}{
		"spec": map[string]interface{}{
			"ports":      []interface{}{map[string]interface{}{"port": int64(80), "protocol": "TCP"}, map[string]interface{}{"port": int64(80), "protocol": "UDP"}},
			"finalizers": []interface{}{"a", "b"},
			"n":          nil,
		},
	}
	tests := []struct {
		name   string
		path   fieldpath.Path
		want   interface{}
		wantOK bool
	}{
		{name: "multi-key item", path: path(field("spec"), field("ports"), key("port", int64(80), "protocol", "UDP"), field("protocol")), want: "UDP", wantOK: true},
		{name: "missing key", path: path(field("spec"), field("ports"), key("port", int64(81), "protocol", "UDP")), wantOK: false},
		{name: "set value", path: path(field("spec"), field("finalizers"), val("b")), want: "b", wantOK: true},
		{name: "index", path: path(field("spec"), field("finalizers"), fieldpath.IndexElement(1)), want: "b", wantOK: true},
		{name: "index out of range", path: path(field("spec"), field("finalizers"), fieldpath.IndexElement(2)), wantOK: false},
		{name: "null is found", path: path(field("spec"), field("n")), want: nil, wantOK: true},
		{name: "field of a scalar", path: path(field("spec"), field("n"), field("x")), wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ownership.Lookup(obj, tt.path)
			if ok != tt.wantOK || (ok && !cmp.Equal(got, tt.want)) {
				t.Errorf("Lookup(%s) = %v, %v; want %v, %v", tt.path, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestPathMatcher(t *testing.T) {
	containerImage := path(field("spec"), field("template"), field("spec"), field("containers"), key("name", "web"), field("image"))
	appLabel := path(field("metadata"), field("labels"), field("app.kubernetes.io/name"))
	tests := []struct {
		name    string
		pattern string
		path    fieldpath.Path
		want    bool
	}{
		{name: "** matches deep paths", pattern: ".spec.template.**", path: containerImage, want: true},
		{name: "** matches no element", pattern: ".spec.template.**", path: path(field("spec"), field("template")), want: true},
		{name: "** needs the prefix", pattern: ".spec.template.**", path: path(field("spec"), field("replicas")), want: false},
		{name: "leading **", pattern: "**.image", path: containerImage, want: true},
		{name: "* is one element", pattern: ".metadata.labels.*", path: path(field("metadata"), field("labels"), field("tier")), want: true},
		{name: "* matches a dotted name as one element", pattern: ".metadata.labels.*", path: appLabel, want: true},
		{name: "* is not two elements", pattern: ".metadata.*", path: appLabel, want: false},
		{name: "key element written as the apiserver does", pattern: `.spec.template.spec.containers[name="web"].image`, path: containerImage, want: true},
		{name: "key element with a wildcard value", pattern: `.spec.template.spec.containers[name="w*"].image`, path: containerImage, want: true},
		{name: "key element of another item", pattern: `.spec.template.spec.containers[name="api"].image`, path: containerImage, want: false},
		{name: "any item", pattern: `.spec.template.spec.containers[*].image`, path: containerImage, want: true},
		{name: "multi-key element", pattern: `.ports[containerPort=80,protocol="TCP"]`, path: path(field("ports"), key("containerPort", int64(80), "protocol", "TCP")), want: true},
		{name: "multi-key element, other protocol", pattern: `.ports[containerPort=80,protocol="TCP"]`, path: path(field("ports"), key("containerPort", int64(80), "protocol", "UDP")), want: false},
		{name: "quoted field name", pattern: `.metadata.labels["app.kubernetes.io/name"]`, path: appLabel, want: true},
		{name: "quoted field name with a wildcard", pattern: `.metadata.labels["app.kubernetes.io/*"]`, path: appLabel, want: true},
		{name: "apiserver form of a dotted name", pattern: ".metadata.labels.app.kubernetes.io/name", path: appLabel, want: true},
		{name: "set value", pattern: `.metadata.finalizers[="example.com/keep"]`, path: path(field("metadata"), field("finalizers"), val("example.com/keep")), want: true},
		{name: "index", pattern: ".spec.args[1]", path: path(field("spec"), field("args"), fieldpath.IndexElement(1)), want: true},
		{name: "index, other item", pattern: ".spec.args[1]", path: path(field("spec"), field("args"), fieldpath.IndexElement(10)), want: false},
		{name: "? is one character", pattern: ".spec.replica?", path: path(field("spec"), field("replicas")), want: true},
		{name: "exact pattern is anchored", pattern: ".spec", path: path(field("spec"), field("replicas")), want: false},
		{name: "prefix of a name does not match", pattern: ".spec.rep", path: path(field("spec"), field("replicas")), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ownership.NewPathMatcher(tt.pattern).Match(tt.path); got != tt.want {
				t.Errorf("NewPathMatcher(%q).Match(%s) = %v, want %v", tt.pattern, tt.path, got, tt.want)
			}
		})
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"kube-*", "kube-controller-manager", true},
		{"kube-*", "kubectl", false},
		{"*", "", true},
		{"", "", true},
		{"", "x", false},
		{"*-controller", "argocd-application-controller", true},
		{"k?bectl", "kubectl", true},
		{"k?bectl", "kbectl", false},
		{"*a*b*", "xxaxxbxx", true},
		{"*a*b*", "xxbxxaxx", false},
		{"helm", "helm-controller", false},
		{"[x]", "[x]", true},
		{"é*", "éclair", true},
	}
	for _, tt := range tests {
		if got := ownership.Glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

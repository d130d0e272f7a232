package pathlang_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

func field(name string) fieldpath.PathElement { return fieldpath.PathElement{FieldName: &name} }

func key(kv ...any) fieldpath.PathElement {
	var fl value.FieldList
	for i := 0; i < len(kv); i += 2 {
		fl = append(fl, value.Field{Name: kv[i].(string), Value: value.NewValueInterface(kv[i+1])})
	}
	fl.Sort()
	return fieldpath.PathElement{Key: &fl}
}

func val(v any) fieldpath.PathElement {
	return fieldpath.ValueElement(value.NewValueInterface(v))
}

func path(pes ...fieldpath.PathElement) fieldpath.Path { return fieldpath.Path(pes) }

// labelled holds the field names with dots and slashes that the apiserver's
// path format leaves ambiguous.
var labelled = map[string]any{
	"metadata": map[string]any{
		"labels": map[string]any{
			"app":                    "x",
			"app.kubernetes.io/name": "web",
		},
		"annotations": map[string]any{"a.b": map[string]any{"c": "nested, to prove the longest key wins only where it exists"}},
	},
	"data": map[string]any{"log.level": "info", "app.properties": "x"},
	"spec": map[string]any{
		"containers": []any{
			map[string]any{"name": "web", "env": []any{map[string]any{"name": "A.B", "value": "1"}}},
		},
	},
}

func TestParsePathRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		path    fieldpath.Path
		objects []any
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
		{name: "label with dots and a slash", path: path(field("metadata"), field("labels"), field("app.kubernetes.io/name")), objects: []any{labelled}},
		{name: "label that prefixes another", path: path(field("metadata"), field("labels"), field("app")), objects: []any{labelled}},
		{name: "dotted key then a plain child", path: path(field("metadata"), field("annotations"), field("a.b"), field("c")), objects: []any{labelled}},
		{name: "dotted key of a ConfigMap", path: path(field("data"), field("log.level")), objects: []any{labelled}},
		{name: "dotted field inside a keyed item", path: path(field("spec"), field("containers"), key("name", "web"), field("env"), key("name", "A.B"), field("value")), objects: []any{labelled}},
		{name: "dotted key found in the second object", path: path(field("data"), field("app.properties")), objects: []any{map[string]any{}, labelled}},
		{name: "empty path", path: path()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.path.String()
			got, err := pathlang.ParsePath(s, tt.objects...)
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
	got, err := pathlang.ParsePath(".metadata.labels.app.kubernetes.io/name")
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
		{name: "unclosed bracket", in: ".spec.containers[name=\"web\"", wantIn: "unclosed ["},
		{name: "unclosed quote", in: `.env[name="a]`, wantIn: "unclosed"},
		{name: "key without value", in: ".spec.containers[name]", wantIn: `key "name" has no value`},
		{name: "garbage after a bracket", in: ".a[0]b", wantIn: `unexpected 'b' after ]`},
		{name: "empty brackets", in: ".a[]", wantIn: "empty []"},
		{name: "negative index", in: ".a[-1]", wantIn: "negative index -1"},
		{name: "wildcard in a path", in: ".spec.containers[*].image", wantIn: "[*] is a wildcard"},
		{name: "wildcard in a name", in: ".spec.template.**", wantIn: "* is a wildcard, and a path names one field"},
		{name: "wildcard in a key value", in: ".spec.containers[name=web?]", wantIn: "? is a wildcard"},
		{name: "missing name", in: ".spec..replicas", wantIn: "a field name is missing"},
		{name: "trailing dot", in: ".spec.", wantIn: "a field name is missing at the end"},
		{name: "bad filter", in: `.c[?(name=="a")]`, wantIn: `filters are written ?(@.name=="app")`},
		{name: "bad managedFields element", in: `.c[k:{"name"}]`, wantIn: "not a managedFields element"},
		{name: "position of the error", in: ".spec.containers[name]", wantIn: "at 17"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pathlang.ParsePath(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("ParsePath(%q) error = %v, want one containing %q", tt.in, err, tt.wantIn)
			}
		})
	}
}

// Every way users write a path names the same one.
func TestParsePathForms(t *testing.T) {
	image := path(field("spec"), field("template"), field("spec"), field("containers"), key("name", "app"), field("image"))
	appLabel := path(field("metadata"), field("labels"), field("app.kubernetes.io/name"))
	port := path(field("ports"), key("containerPort", int64(80), "protocol", "TCP"))
	tests := []struct {
		name string
		in   []string
		want fieldpath.Path
	}{
		{name: "a key as the apiserver, who-owns and people write it", want: image, in: []string{
			`.spec.template.spec.containers[name="app"].image`,
			`.spec.template.spec.containers[name=app].image`,
			`.spec.template.spec.containers[name='app'].image`,
			`.spec.template.spec.containers[ name = "app" ].image`,
			`spec.template.spec.containers[name="app"].image`,
			`{.spec.template.spec.containers[?(@.name=="app")].image}`,
			`.spec.template.spec.containers[?(@.name=='app')].image`,
			`.spec.template.spec.containers[k:{"name":"app"}].image`,
			`.spec.template.spec.containers.k:{"name":"app"}.image`,
			`f:spec.f:template.f:spec.f:containers.k:{"name":"app"}.f:image`,
			`.f:spec.f:template.f:spec.f:containers.k:{"name":"app"}.f:image`,
		}},
		{name: "a dotted name", want: appLabel, in: []string{
			`.metadata.labels["app.kubernetes.io/name"]`,
			`.metadata.labels['app.kubernetes.io/name']`,
			`.metadata.labels.app\.kubernetes\.io/name`,
			`{.metadata.labels.app\.kubernetes\.io/name}`,
			`f:metadata.f:labels.f:app.kubernetes.io/name`,
			`.metadata.labels[f:app.kubernetes.io/name]`,
		}},
		{name: "two keys", want: port, in: []string{
			`.ports[containerPort=80,protocol="TCP"]`,
			`.ports[protocol=TCP,containerPort=80]`,
			`.ports[?(@.containerPort==80 && @.protocol=="TCP")]`,
			`.ports[k:{"containerPort":80,"protocol":"TCP"}]`,
		}},
		{name: "an index", want: path(field("args"), fieldpath.IndexElement(2)), in: []string{".args[2]", "args[2]", "{.args[2]}", ".args[i:2]", "f:args.i:2"}},
		{name: "a set value", want: path(field("metadata"), field("finalizers"), val("example.com/keep")), in: []string{
			`.metadata.finalizers[="example.com/keep"]`,
			`.metadata.finalizers[=example.com/keep]`,
			`.metadata.finalizers[v:"example.com/keep"]`,
			`f:metadata.f:finalizers.v:"example.com/keep"`,
		}},
		{name: "a key of a bool and a number", want: path(field("x"), key("a", true, "b", int64(-2))), in: []string{`.x[a=true,b=-2]`, `.x[k:{"a":true,"b":-2}]`}},
		{name: "the root", want: path(), in: []string{"", ".", "{.}"}},
		{name: "a star that is part of a name", want: path(field("data"), field("a*b?")), in: []string{`.data.a\*b\?`, `.data["a*b?"]`, `.data['a*b?']`}},
	}
	for _, tt := range tests {
		for _, in := range tt.in {
			t.Run(tt.name+"/"+in, func(t *testing.T) {
				got, err := pathlang.ParsePath(in)
				if err != nil {
					t.Fatalf("ParsePath(%q): %v", in, err)
				}
				if !got.Equals(tt.want) {
					t.Errorf("ParsePath(%q) = %s, want %s", in, pathlang.Path(got), pathlang.Path(tt.want))
				}
			})
		}
	}
}

// Given the object, a path names list items the way its managedFields do,
// whatever the user wrote: handover --field .spec.containers[0].image
// moves what managedFields call .spec.containers[name="web"].image.
func TestParsePathResolvesItemsAgainstTheObject(t *testing.T) {
	obj := testkit.Object(t, testkit.Widget).Object
	web := path(field("spec"), field("containers"), key("name", "web"))
	tests := []struct {
		name, in string
		want     fieldpath.Path
	}{
		{name: "an index of a keyed list", in: ".spec.containers[0].image", want: append(web.Copy(), field("image"))},
		{name: "part of a two-field key", in: ".spec.containers[0].ports[containerPort=80]", want: append(web.Copy(), field("ports"), key("containerPort", int64(80), "protocol", "TCP"))},
		{name: "an index of a set", in: ".metadata.finalizers[0]", want: path(field("metadata"), field("finalizers"), val("example.com/keep"))},
		{name: "an index of a list managed by position stays", in: ".spec.steps[1].run", want: path(field("spec"), field("steps"), fieldpath.IndexElement(1), field("run"))},
		{name: "a bare word takes the type of the item", in: ".spec.containers[name=web].ports[containerPort=8080,protocol=UDP]", want: append(web.Copy(), field("ports"), key("containerPort", int64(8080), "protocol", "UDP"))},
		{name: "a JSONPath filter on a field that is not the key", in: `.spec.containers[?(@.image=="nginx:1.27")].name`, want: append(web.Copy(), field("name"))},
		{name: "the apiserver's dotted name", in: ".metadata.labels.app.kubernetes.io/name", want: path(field("metadata"), field("labels"), field("app.kubernetes.io/name"))},
		{name: "an item the object lacks stays as written", in: ".spec.containers[name=api].image", want: path(field("spec"), field("containers"), key("name", "api"), field("image"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pathlang.ParsePath(tt.in, obj)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equals(tt.want) {
				t.Errorf("ParsePath(%q) = %s, want %s", tt.in, pathlang.Path(got), pathlang.Path(tt.want))
			}
		})
	}
}

func TestPathString(t *testing.T) {
	tests := []struct {
		name    string
		path    fieldpath.Path
		want    string
		wantAPI string
	}{
		{name: "plain fields", path: path(field("spec"), field("replicas")), want: ".spec.replicas", wantAPI: ".spec.replicas"},
		{name: "dotted and slashed names are quoted", path: path(field("metadata"), field("labels"), field("app.kubernetes.io/name")), want: `.metadata.labels["app.kubernetes.io/name"]`, wantAPI: ".metadata.labels.app.kubernetes.io/name"},
		{name: "dashes and underscores stay plain", path: path(field("x-y_z$")), want: ".x-y_z$", wantAPI: ".x-y_z$"},
		{name: "a name starting with a digit is quoted", path: path(field("data"), field("1st")), want: `.data["1st"]`, wantAPI: ".data.1st"},
		{name: "keys, values and indices as the apiserver writes them", path: path(field("c"), key("name", "web"), field("p"), val("v"), fieldpath.IndexElement(2)), want: `.c[name="web"].p[="v"][2]`, wantAPI: `.c[name="web"].p[="v"][2]`},
		{name: "control characters are escaped", path: path(field("data"), field("a\nb"), key("name", "x\x1by")), want: `.data["a\nb"][name="x\x1by"]`, wantAPI: ".data.a\nb[name=\"x\\x1by\"]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pathlang.Path(tt.path)
			if got := p.String(); got != tt.want {
				t.Errorf("String = %s, want %s", got, tt.want)
			}
			if got := p.APIServerString(); got != tt.wantAPI || got != tt.path.String() {
				t.Errorf("APIServerString = %q, want %q (fieldpath: %q)", got, tt.wantAPI, tt.path.String())
			}
			b, err := json.Marshal(struct {
				P pathlang.Path `json:"p"`
			}{p})
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(struct {
				P string `json:"p"`
			}{tt.path.String()})
			if string(b) != string(want) {
				t.Errorf("JSON = %s, want %s (the apiserver's string)", b, want)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	obj := map[string]any{
		"spec": map[string]any{
			"ports":      []any{map[string]any{"port": int64(80), "protocol": "TCP"}, map[string]any{"port": int64(80), "protocol": "UDP"}},
			"finalizers": []any{"a", "b"},
			"n":          nil,
		},
	}
	tests := []struct {
		name   string
		path   fieldpath.Path
		want   any
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
			got, ok := pathlang.Lookup(obj, tt.path)
			if ok != tt.wantOK || (ok && !cmp.Equal(got, tt.want)) {
				t.Errorf("Lookup(%s) = %v, %v; want %v, %v", tt.path, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestPattern(t *testing.T) {
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
		{name: "JSONPath's .. is **", pattern: "..image", path: containerImage, want: true},
		{name: "* is one element", pattern: ".metadata.labels.*", path: path(field("metadata"), field("labels"), field("tier")), want: true},
		{name: "* matches a dotted name as one element", pattern: ".metadata.labels.*", path: appLabel, want: true},
		{name: "* is not two elements", pattern: ".metadata.*", path: appLabel, want: false},
		{name: "key element written as the apiserver does", pattern: `.spec.template.spec.containers[name="web"].image`, path: containerImage, want: true},
		{name: "key element with a bare word", pattern: `.spec.template.spec.containers[name=web].image`, path: containerImage, want: true},
		{name: "key element, bare word, then *", pattern: `.spec.template.spec.containers[name=web].*`, path: containerImage, want: true},
		{name: "key element as a JSONPath filter", pattern: `{.spec.template.spec.containers[?(@.name=="web")].image}`, path: containerImage, want: true},
		{name: "key element as managedFields writes it", pattern: `.spec.template.spec.containers[k:{"name":"web"}].image`, path: containerImage, want: true},
		{name: "key element with a wildcard value", pattern: `.spec.template.spec.containers[name="w*"].image`, path: containerImage, want: true},
		{name: "key element of another item", pattern: `.spec.template.spec.containers[name="api"].image`, path: containerImage, want: false},
		{name: "any item", pattern: `.spec.template.spec.containers[*].image`, path: containerImage, want: true},
		{name: "multi-key element", pattern: `.ports[containerPort=80,protocol="TCP"]`, path: path(field("ports"), key("containerPort", int64(80), "protocol", "TCP")), want: true},
		{name: "part of a multi-key element", pattern: `.ports[containerPort=80]`, path: path(field("ports"), key("containerPort", int64(80), "protocol", "TCP")), want: true},
		{name: "multi-key element, other protocol", pattern: `.ports[containerPort=80,protocol="TCP"]`, path: path(field("ports"), key("containerPort", int64(80), "protocol", "UDP")), want: false},
		{name: "a quoted number is a string", pattern: `.ports[containerPort="80"]`, path: path(field("ports"), key("containerPort", int64(80), "protocol", "TCP")), want: false},
		{name: "quoted field name", pattern: `.metadata.labels["app.kubernetes.io/name"]`, path: appLabel, want: true},
		{name: "quoted field name with a wildcard", pattern: `.metadata.labels["app.kubernetes.io/*"]`, path: appLabel, want: true},
		{name: "apiserver form of a dotted name", pattern: ".metadata.labels.app.kubernetes.io/name", path: appLabel, want: true},
		{name: "apiserver form of a dotted name, wildcard at the end", pattern: ".metadata.labels.app.kubernetes.io/*", path: appLabel, want: true},
		{name: "apiserver form of a dotted name, then **", pattern: ".metadata.labels.app.kubernetes.**", path: appLabel, want: false},
		{name: "a prefix of a dotted name is not the name", pattern: ".metadata.labels.app", path: appLabel, want: false},
		{name: "escaped dots", pattern: `.metadata.labels.app\.kubernetes\.io/name`, path: appLabel, want: true},
		{name: "set value", pattern: `.metadata.finalizers[="example.com/keep"]`, path: path(field("metadata"), field("finalizers"), val("example.com/keep")), want: true},
		{name: "set value, wildcard", pattern: `.metadata.finalizers[=example.com/*]`, path: path(field("metadata"), field("finalizers"), val("example.com/keep")), want: true},
		{name: "index", pattern: ".spec.args[1]", path: path(field("spec"), field("args"), fieldpath.IndexElement(1)), want: true},
		{name: "index, other item", pattern: ".spec.args[1]", path: path(field("spec"), field("args"), fieldpath.IndexElement(10)), want: false},
		{name: "index against a key, without the object", pattern: ".spec.template.spec.containers[0].image", path: containerImage, want: false},
		{name: "? is one character", pattern: ".spec.replica?", path: path(field("spec"), field("replicas")), want: true},
		{name: "escaped * is a star", pattern: `.data.a\*`, path: path(field("data"), field("ab")), want: false},
		{name: "exact pattern is anchored", pattern: ".spec", path: path(field("spec"), field("replicas")), want: false},
		{name: "prefix of a name does not match", pattern: ".spec.rep", path: path(field("spec"), field("replicas")), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := pathlang.NewPattern(tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Match(tt.path); got != tt.want {
				t.Errorf("NewPattern(%q).Match(%s) = %v, want %v", tt.pattern, pathlang.Path(tt.path), got, tt.want)
			}
		})
	}
}

// With the object, items match however the pattern and the path name
// them: by position, by key, by another field.
func TestPatternMatchIn(t *testing.T) {
	obj := testkit.Object(t, testkit.Widget).Object
	web := path(field("spec"), field("containers"), key("name", "web"))
	tests := []struct {
		name    string
		pattern string
		path    fieldpath.Path
		want    bool
	}{
		{name: "index against a key", pattern: ".spec.containers[0].image", path: append(web.Copy(), field("image")), want: true},
		{name: "index against a key, other position", pattern: ".spec.containers[1].image", path: append(web.Copy(), field("image")), want: false},
		{name: "index against a key, then *", pattern: ".spec.containers[0].*", path: append(web.Copy(), field("name")), want: true},
		{name: "index against a set value", pattern: ".metadata.finalizers[1]", path: path(field("metadata"), field("finalizers"), val("example.com/other")), want: true},
		{name: "a field that is not the key", pattern: `.spec.containers[?(@.image=="nginx:*")].name`, path: append(web.Copy(), field("name")), want: true},
		{name: "a field that is not the key, other value", pattern: `.spec.containers[image=redis].name`, path: append(web.Copy(), field("name")), want: false},
		{name: "key against an index", pattern: ".spec.steps[run=test].run", path: path(field("spec"), field("steps"), fieldpath.IndexElement(1), field("run")), want: true},
		{name: "key against an index, other item", pattern: ".spec.steps[run=make].run", path: path(field("spec"), field("steps"), fieldpath.IndexElement(1), field("run")), want: false},
		{name: "value against an index", pattern: ".metadata.finalizers[=example.com/other]", path: path(field("metadata"), field("finalizers"), fieldpath.IndexElement(1)), want: true},
		{name: "an item the object lacks", pattern: ".spec.containers[3]", path: path(field("spec"), field("containers"), key("name", "gone")), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := pathlang.NewPattern(tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.MatchIn(tt.path, obj); got != tt.want {
				t.Errorf("NewPattern(%q).MatchIn(%s) = %v, want %v", tt.pattern, pathlang.Path(tt.path), got, tt.want)
			}
		})
	}
}

func TestPatternErrors(t *testing.T) {
	for _, in := range []string{".spec[", ".a[name]", `.a["x]`, ".a..", ".a[0]b"} {
		if _, err := pathlang.NewPattern(in); err == nil {
			t.Errorf("NewPattern(%q) = nil error", in)
		}
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
		if got := pathlang.Glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

// Paths the apiserver writes read back as they were written: "*" is a
// character there, and what can't be read stays one element with the
// same text.
func TestParseServerPath(t *testing.T) {
	tests := []struct {
		in   string
		want fieldpath.Path
	}{
		{in: `.data.a*b?`, want: path(field("data"), field("a*b?"))},
		{in: `.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"]`, want: path(field("spec"), field("containers"), key("name", "web"), field("ports"), key("containerPort", int64(80), "protocol", "TCP"))},
		{in: `.data.a[b`, want: path(field("data.a[b"))},
	}
	for _, tt := range tests {
		got := pathlang.ParseServerPath(tt.in)
		if !got.Elements().Equals(tt.want) {
			t.Errorf("ParseServerPath(%q) = %s, want %s", tt.in, got, pathlang.Path(tt.want))
		}
		if got.APIServerString() != tt.in {
			t.Errorf("ParseServerPath(%q) marshals to %q", tt.in, got.APIServerString())
		}
		var back struct{ P pathlang.Path }
		if err := json.Unmarshal([]byte(`{"P":`+strconv.Quote(tt.in)+`}`), &back); err != nil || back.P.APIServerString() != tt.in {
			t.Errorf("JSON %q read back as %q (%v)", tt.in, back.P.APIServerString(), err)
		}
	}
}

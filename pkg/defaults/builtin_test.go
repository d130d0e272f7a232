package defaults

import (
	"reflect"
	"strings"
	"testing"
)

// The lazy per-kind reading finds every kind of the file, with the fields
// the whole-file Parse reads.
func TestBuiltinLazyEqualsParse(t *testing.T) {
	whole, err := Parse(builtinJSON)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Kinds) < 50 {
		t.Fatalf("only %d kinds in the generated data", len(whole.Kinds))
	}
	for k, want := range whole.Kinds {
		got, ok, err := builtinKind(k)
		if err != nil || !ok {
			t.Fatalf("%s: found %v, %v", k, ok, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: lazy reading differs from Parse", k)
		}
	}
	if _, ok, err := builtinKind("v1/NoSuchKind"); ok || err != nil {
		t.Errorf("unknown kind: found %v, %v", ok, err)
	}
	if got := BuiltinSource(); got != whole.Source || !strings.Contains(got, "k8s.io/kubernetes") {
		t.Errorf("BuiltinSource() = %q, want %q", got, whole.Source)
	}
}

// BenchmarkBuiltinFirstLookup is the cost a run pays for the defaults of
// one kind (a Deployment); decoding the whole file cost about 18 ms.
func BenchmarkBuiltinFirstLookup(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, ok, err := builtinKind("apps/v1/Deployment"); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkParseWhole(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Parse(builtinJSON); err != nil {
			b.Fatal(err)
		}
	}
}

package fight

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// Options tune a Tracker.
type Options struct {
	// MinFlips is how many flips within Window make a fight.
	MinFlips int
	// Window is how far back flips count.
	Window time.Duration
}

// Defaults: three flips in five minutes is no accident, and a slow
// reconciler (Argo CD's self-heal after 5 s, an HPA every 15 s) fights
// well within that.
const (
	DefaultMinFlips = 3
	DefaultWindow   = 5 * time.Minute
)

// Tracker follows objects over time. It is not safe for concurrent use.
type Tracker struct {
	o       Options
	objects map[types.UID]map[string]*pathState
	fought  map[string]bool
	swept   time.Time
}

type owners struct {
	key  string
	list []v1alpha1.Owner
}

type flip struct {
	at        time.Time
	from, to  owners
	fromValue any
	toValue   any
}

type pathState struct {
	path  pathlang.Path
	own   owners
	value any
	flips []flip
}

// New makes a Tracker.
func New(o Options) *Tracker {
	if o.MinFlips < 2 {
		o.MinFlips = 2
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	return &Tracker{o: o, objects: map[types.UID]map[string]*pathState{}, fought: map[string]bool{}}
}

// Seen tells whether any fight was found.
func (t *Tracker) Seen() bool { return len(t.fought) > 0 }

// Forget drops what is known of a deleted object.
func (t *Tracker) Forget(obj *unstructured.Unstructured) { delete(t.objects, obj.GetUID()) }

// Observe takes one version of an object, read at now, and returns the
// fights that this version started or carried on.
func (t *Tracker) Observe(obj *unstructured.Unstructured, now time.Time) ([]v1alpha1.Fight, error) {
	rep, err := ownership.Analyze(obj, ownership.Options{ShowSecretValues: true})
	if err != nil {
		return nil, err
	}
	paths := t.objects[obj.GetUID()]
	if paths == nil {
		paths = map[string]*pathState{}
		t.objects[obj.GetUID()] = paths
	}
	var out []v1alpha1.Fight
	secret := ownership.IsSecret(obj.GetAPIVersion(), obj.GetKind())
	fields := rep.Fields
	if secret {
		fields = secretKeys(obj, fields)
	}
	for _, f := range fields {
		if !f.HasValue || f.Absent {
			continue
		}
		key := f.Path.String()
		own := ownersOf(f.Owners)
		st := paths[key]
		if st == nil {
			paths[key] = &pathState{path: f.Path, own: own, value: f.Value}
			continue
		}
		if st.own.key == own.key || reflect.DeepEqual(st.value, f.Value) {
			// The same owner writing (a controller, a rollout), or
			// a new owner of the same value (a handover): no flip.
			st.own, st.value = own, f.Value
			continue
		}
		st.flips = append(st.flips, flip{at: now, from: st.own, to: own, fromValue: st.value, toValue: f.Value})
		st.own, st.value = own, f.Value
		st.prune(now, t.o.Window)
		if !st.fighting(t.o.MinFlips) {
			continue
		}
		t.fought[string(obj.GetUID())+"\x00"+key] = true
		out = append(out, st.fight(rep.Object, now))
	}
	return out, nil
}

// secretKeys folds a Secret's .stringData.KEY into .data.KEY: the
// apiserver stores what a stringData writer wrote in data, so the two are
// one value, and a writer of one fights a writer of the other. Where both
// are owned, the value's writer is the owner whose entry was written last
// (ownership itself never moves between the two paths).
func secretKeys(obj *unstructured.Unstructured, fields []v1alpha1.Field) []v1alpha1.Field {
	stringData := map[string]v1alpha1.Field{}
	var out []v1alpha1.Field
	for _, f := range fields {
		if key, ok := ownership.StringDataKey(f.Path.Elements()); ok {
			stringData[key] = f
			continue
		}
		out = append(out, f)
	}
	if len(stringData) == 0 {
		return fields
	}
	seen := map[string]bool{}
	for i, f := range out {
		key, ok := dataKey(f.Path)
		sd, both := stringData[key]
		if !ok || !both {
			continue
		}
		seen[key] = true
		out[i].Owners = latest(append(append([]v1alpha1.Owner{}, f.Owners...), sd.Owners...))
	}
	keys := make([]string, 0, len(stringData))
	for k := range stringData {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if seen[key] {
			continue
		}
		// Only stringData writers: the path they write, the value the
		// apiserver keeps in data.
		f := stringData[key]
		v, ok, _ := unstructured.NestedString(obj.Object, "data", key)
		f.Value, f.HasValue, f.Absent = v, ok, !ok
		out = append(out, f)
	}
	return out
}

// dataKey returns KEY of a Secret's .data.KEY.
func dataKey(p pathlang.Path) (string, bool) {
	fp := fieldpath.Path(p)
	if len(fp) != 2 || fp[0].FieldName == nil || *fp[0].FieldName != "data" || fp[1].FieldName == nil {
		return "", false
	}
	return *fp[1].FieldName, true
}

// latest keeps the owners whose entries were written last.
func latest(list []v1alpha1.Owner) []v1alpha1.Owner {
	var at time.Time
	for _, o := range list {
		if o.Time != nil && o.Time.After(at) {
			at = o.Time.Time
		}
	}
	if at.IsZero() {
		return list
	}
	var out []v1alpha1.Owner
	for _, o := range list {
		if o.Time != nil && o.Time.Time.Equal(at) {
			out = append(out, o)
		}
	}
	return out
}

func ownersOf(list []v1alpha1.Owner) owners {
	ids := make([]string, len(list))
	for i, o := range list {
		ids[i] = o.Manager + "\x00" + string(o.Operation) + "\x00" + string(o.Subresource)
	}
	sort.Strings(ids)
	return owners{key: strings.Join(ids, "\x01"), list: list}
}

func (st *pathState) prune(now time.Time, window time.Duration) {
	i := 0
	for i < len(st.flips) && now.Sub(st.flips[i].at) > window {
		i++
	}
	st.flips = st.flips[i:]
}

// fighting: enough flips, and some owner took the path back after losing
// it (a chain of handovers never does).
func (st *pathState) fighting(minFlips int) bool {
	if len(st.flips) < minFlips {
		return false
	}
	lost := map[string]bool{}
	for _, f := range st.flips {
		if lost[f.to.key] {
			return true
		}
		lost[f.from.key] = true
	}
	return false
}

func (st *pathState) fight(ref v1alpha1.ObjectRef, now time.Time) v1alpha1.Fight {
	f := v1alpha1.Fight{TypeMeta: v1alpha1.NewTypeMeta(v1alpha1.FightKind), Object: ref, Path: st.path, Flips: len(st.flips),
		Since: metav1.NewTime(st.flips[0].at), Last: metav1.NewTime(now), Managers: []v1alpha1.Writer{}, Values: []any{}}
	seen := map[string]int{}
	addWriter := func(o owners, v any) {
		for _, ow := range o.list {
			id := ow.Manager + "\x00" + string(ow.Operation) + "\x00" + string(ow.Subresource)
			ow.Time = nil
			if i, ok := seen[id]; ok {
				f.Managers[i].Value = v // the latest value it wrote
				continue
			}
			seen[id] = len(f.Managers)
			f.Managers = append(f.Managers, v1alpha1.Writer{Owner: ow, Value: v})
		}
	}
	addValue := func(v any) {
		for _, x := range f.Values {
			if reflect.DeepEqual(x, v) {
				return
			}
		}
		f.Values = append(f.Values, v)
	}
	addWriter(st.flips[0].from, st.flips[0].fromValue)
	addValue(st.flips[0].fromValue)
	for _, fl := range st.flips {
		addWriter(fl.to, fl.toValue)
		addValue(fl.toValue)
	}
	if ownership.IsSecret(ref.APIVersion, ref.Kind) && secretPath(st.path) {
		// Values are compared in full but never shown: the n-th distinct
		// value is "<redacted #n>".
		for i := range f.Managers {
			f.Managers[i].Value = redacted(f.Values, f.Managers[i].Value)
		}
		for i := range f.Values {
			f.Values[i] = ownership.RedactedN(i + 1)
		}
	}
	span := now.Sub(st.flips[0].at)
	if span < time.Second {
		span = time.Second
	}
	f.PerMinute = float64(int(float64(len(st.flips))/span.Minutes()*10)) / 10
	return f
}

// secretPath tells whether a path of a Secret holds a secret value: data,
// stringData, or the last-applied annotation (which copies them).
func secretPath(p pathlang.Path) bool {
	fp := fieldpath.Path(p)
	if len(fp) == 0 || fp[0].FieldName == nil {
		return false
	}
	switch *fp[0].FieldName {
	case "data", "stringData":
		return true
	}
	return fp.Equals(ownership.LastAppliedPath)
}

func redacted(values []any, v any) any {
	for i, x := range values {
		if reflect.DeepEqual(x, v) {
			return ownership.RedactedN(i + 1)
		}
	}
	return v1alpha1.Redacted
}

// Stream is a watch: it calls back with each version of the watched
// objects (deleted when one is gone) until ctx ends or it fails.
type Stream func(ctx context.Context, fn func(obj *unstructured.Unstructured, deleted bool)) error

// Result is what Watch saw.
type Result struct {
	// Seen: a fight was found.
	Seen bool
	// Failed is the last error of reading an object or of emit; each was
	// given to onError when it happened.
	Failed error
}

// Watch runs stream through a Tracker of o, calling emit with each fight
// when it is found and at each further flip, and onError with each
// object it could not read. now is the clock. The error is stream's.
func Watch(ctx context.Context, stream Stream, o Options, now func() time.Time, emit func(v1alpha1.Fight) error, onError func(error)) (Result, error) {
	tr := New(o)
	var res Result
	err := stream(ctx, func(obj *unstructured.Unstructured, deleted bool) {
		if deleted {
			tr.Forget(obj)
			return
		}
		fights, err := tr.Observe(obj, now())
		if err != nil {
			onError(err)
			res.Failed = err
			return
		}
		for _, f := range fights {
			if err := emit(f); err != nil {
				res.Failed = err
			}
		}
	})
	res.Seen = tr.Seen()
	return res, err
}

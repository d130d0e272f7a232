package monitor

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/audit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/fight"
)

// The policies of what a change shows rather than a state: they stay in
// the PolicyReport for a window after the last time they were seen.
const (
	PolicyFight    = "ownership-fight"
	PolicyTakeover = "forced-takeover"
)

// The Events' reasons.
const (
	ReasonFight    = "OwnershipFight"
	ReasonEdit     = "ManualEdit"
	ReasonTakeover = "ForcedTakeover"
)

// result is one finding on one object, as the report shows it.
type result struct {
	policy   string
	severity v1alpha1.Severity
	manager  string
	message  string
	fix      string
	// at is when it was first found (a fight or a takeover: last seen).
	at time.Time
}

func (r result) key() string { return r.policy + "\x00" + r.manager + "\x00" + r.message }

// found is what is known of one object with findings; objects without
// any are not kept.
type found struct {
	ref    v1alpha1.ObjectRef
	audit  []result
	recent []result
}

// check audits one version of an object, updating the gauges and the
// namespace's report when its findings changed.
func (m *Monitor) check(k kube.Resource, meta *metav1.PartialObjectMetadata) {
	ref := refOf(k, meta)
	fs := audit.Check(audit.ObjectOf(ref.APIVersion, ref.Kind, meta), m.cfg.Audit)
	st := m.objects[meta.UID]
	var old []result
	if st != nil {
		old, st.ref = st.audit, ref
	}
	now := m.cfg.Now()
	res := make([]result, len(fs))
	for i, f := range fs {
		res[i] = result{policy: string(f.Code), severity: f.Severity, manager: f.Manager, message: f.Message, fix: f.Fix.String(), at: now}
		for _, o := range old {
			if o.key() == res[i].key() {
				res[i].at = o.at
			}
		}
	}
	if slices.EqualFunc(old, res, func(a, b result) bool { return a.key() == b.key() }) {
		return
	}
	m.gauge(ref, old, -1)
	m.gauge(ref, res, 1)
	if st == nil {
		st = &found{ref: ref}
		m.objects[meta.UID] = st
	}
	st.audit = res
	m.dirty[ref.Namespace] = true
	m.drop(st)
}

// gauge counts findings in or out of kubectl_ssa_findings; a series
// that falls to zero is dropped, so that the namespaces and kinds gone
// leave none behind.
func (m *Monitor) gauge(ref v1alpha1.ObjectRef, rs []result, by int) {
	for _, r := range rs {
		labels := []string{ref.Namespace, ref.Kind, r.policy, string(r.severity)}
		key := strings.Join(labels, "\x00")
		m.open[key] += by
		if m.open[key] <= 0 {
			delete(m.open, key)
			m.metrics.Findings.DeleteLabelValues(labels...)
			continue
		}
		m.metrics.Findings.WithLabelValues(labels...).Set(float64(m.open[key]))
	}
}

// drop forgets an object left without findings.
func (m *Monitor) drop(st *found) {
	if len(st.audit) == 0 && len(st.recent) == 0 {
		delete(m.objects, metaUID(st.ref))
	}
}

// forget drops a deleted object.
func (m *Monitor) forget(k kube.Resource, meta *metav1.PartialObjectMetadata) {
	if st := m.objects[meta.UID]; st != nil {
		m.gauge(st.ref, st.audit, -1)
		delete(m.objects, meta.UID)
		m.dirty[meta.Namespace] = true
	}
	u := &unstructured.Unstructured{}
	u.SetUID(meta.UID)
	m.tracker.Forget(u)
	_ = k
}

// changed reads what a write did to the owners of an object's fields:
// hand edits of an applier's fields, forced takeovers, fights.
func (m *Monitor) changed(k kube.Resource, old, cur *metav1.PartialObjectMetadata) {
	moves, err := fight.Moves(old.ManagedFields, cur.ManagedFields)
	if err != nil || len(moves) == 0 {
		return // a corrupt entry is audit's to report
	}
	ref := refOf(k, cur)
	now := m.cfg.Now()
	for _, g := range group(moves, handEdit) {
		m.metrics.ManualEdits.WithLabelValues(ref.Namespace, ref.Kind, g.to.Manager).Inc()
		m.event(ref, ReasonEdit, editMessage(g, m.editFix(cur, g.to.Manager, ref)))
	}
	for _, g := range group(moves, takeover) {
		m.metrics.ForcedTakeovers.WithLabelValues(ref.Namespace, ref.Kind, g.to.Manager).Inc()
		msg, fix := takeoverMessage(ref, g, m.cfg.Audit.ClusterFlags)
		m.event(ref, ReasonTakeover, msg+"; fix: "+fix)
		m.remember(ref, result{policy: PolicyTakeover, severity: v1alpha1.SeverityWarning, manager: g.to.Manager, message: msg, fix: fix, at: now})
	}
	for _, f := range m.tracker.Moved(ref, moves, now) {
		taker := takerOf(moves, f.Path)
		m.metrics.Fights.WithLabelValues(ref.Namespace, ref.Kind, taker).Inc()
		msg, fix := fightMessage(ref, f, m.cfg.Fight.Window, m.cfg.Audit.ClusterFlags)
		m.event(ref, ReasonFight, msg+"; fix: "+fix)
		m.remember(ref, result{policy: PolicyFight, severity: v1alpha1.SeverityError, manager: managers(f), message: msg, fix: fix, at: now})
	}
}

// editFix is the fix audit gives the hand edit of manager, or an audit
// of the object when it gives none.
func (m *Monitor) editFix(cur *metav1.PartialObjectMetadata, manager string, ref v1alpha1.ObjectRef) string {
	if st := m.objects[cur.UID]; st != nil {
		for _, r := range st.audit {
			if r.manager == manager && r.fix != "" {
				return r.fix
			}
		}
	}
	return target(ref, m.cfg.Audit.ClusterFlags).SSA([]string{"audit"}).String()
}

// remember keeps a fight or takeover for the report, in place of the
// same one seen before.
func (m *Monitor) remember(ref v1alpha1.ObjectRef, r result) {
	uid := metaUID(ref)
	st := m.objects[uid]
	if st == nil {
		st = &found{ref: ref}
		m.objects[uid] = st
	}
	st.recent = slices.DeleteFunc(st.recent, func(o result) bool { return o.key() == r.key() })
	st.recent = append(st.recent, r)
	m.dirty[ref.Namespace] = true
}

// expire forgets the fights and takeovers last seen before the window.
func (m *Monitor) expire() {
	now := m.cfg.Now()
	for _, st := range m.objects {
		n := len(st.recent)
		st.recent = slices.DeleteFunc(st.recent, func(r result) bool { return now.Sub(r.at) > m.cfg.Fight.Window })
		if len(st.recent) != n {
			m.dirty[st.ref.Namespace] = true
			m.drop(st)
		}
	}
}

// moved is the fields one manager took from others in one write.
type moved struct {
	to    metav1.ManagedFieldsEntry
	from  []string
	paths []string
}

// group gathers the moves sel picks by the entry that took them; sel
// returns that entry.
func group(moves []fight.Move, sel func(fight.Move) (metav1.ManagedFieldsEntry, bool)) []moved {
	var out []moved
	for _, mv := range moves {
		to, ok := sel(mv)
		if !ok {
			continue
		}
		i := slices.IndexFunc(out, func(g moved) bool { return g.to.Manager == to.Manager })
		if i < 0 {
			out = append(out, moved{to: to})
			i = len(out) - 1
		}
		out[i].paths = append(out[i].paths, mv.Path.String())
		for _, f := range mv.From {
			if !slices.Contains(out[i].from, f.Manager) {
				out[i].from = append(out[i].from, f.Manager)
			}
		}
	}
	return out
}

// handEdit: a person's write (kubectl edit, patch, scale; Argo CD's UI)
// took a field from an applier.
func handEdit(mv fight.Move) (metav1.ManagedFieldsEntry, bool) {
	if !slices.ContainsFunc(mv.From, isApply) {
		return metav1.ManagedFieldsEntry{}, false
	}
	for _, e := range mv.To {
		if audit.IsManual(e) {
			return e, true
		}
	}
	return metav1.ManagedFieldsEntry{}, false
}

// takeover: an applier took a field from another: only a forced apply
// can (without force, the apply conflicts and writes nothing).
func takeover(mv fight.Move) (metav1.ManagedFieldsEntry, bool) {
	if len(mv.To) == 0 || !all(mv.From, isApply) || !all(mv.To, isApply) {
		return metav1.ManagedFieldsEntry{}, false
	}
	return mv.To[0], true
}

func isApply(e metav1.ManagedFieldsEntry) bool {
	return e.Operation == metav1.ManagedFieldsOperationApply
}

func all(es []metav1.ManagedFieldsEntry, f func(metav1.ManagedFieldsEntry) bool) bool {
	for _, e := range es {
		if !f(e) {
			return false
		}
	}
	return true
}

// takerOf is the manager that took path in this write.
func takerOf(moves []fight.Move, path fmt.Stringer) string {
	for _, mv := range moves {
		if mv.Path.String() == path.String() && len(mv.To) > 0 {
			return mv.To[0].Manager
		}
	}
	return ""
}

func managers(f v1alpha1.Fight) string {
	names := make([]string, 0, len(f.Managers))
	for _, w := range f.Managers {
		if !slices.Contains(names, w.Manager) {
			names = append(names, w.Manager)
		}
	}
	return strings.Join(names, ",")
}

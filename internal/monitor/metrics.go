package monitor

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the monitor's series. Their labels are bounded (namespace,
// kind, code, severity, manager): never an object's name, whose number
// has no bound.
type Metrics struct {
	Fights, ManualEdits, ForcedTakeovers *prometheus.CounterVec
	Findings                             *prometheus.GaugeVec
	Objects                              *prometheus.GaugeVec
}

// The label names.
const (
	labelNamespace = "namespace"
	labelKind      = "kind"
	labelManager   = "manager"
	labelCode      = "code"
	labelSeverity  = "severity"
)

// NewMetrics makes the series and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	byManager := []string{labelNamespace, labelKind, labelManager}
	m := &Metrics{
		Fights: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubectl_ssa_fights_total",
			Help: "Flips of fields fought over: each time a manager takes back a field in an ownership fight, by the manager that took it."}, byManager),
		ManualEdits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubectl_ssa_manual_edits_total",
			Help: "Hand edits (kubectl edit, patch, set, scale; Argo CD's UI) that took fields from an applier, by the editing manager."}, byManager),
		ForcedTakeovers: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubectl_ssa_forced_takeovers_total",
			Help: "Forced applies that took fields from another applier, by the manager that took them."}, byManager),
		Findings: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kubectl_ssa_findings",
			Help: "Open audit findings of the watched objects, by code and severity (kubectl ssa audit's codes)."},
			[]string{labelNamespace, labelKind, labelCode, labelSeverity}),
		Objects: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kubectl_ssa_objects",
			Help: "Objects watched, by kind."}, []string{labelKind}),
	}
	reg.MustRegister(m.Fights, m.ManualEdits, m.ForcedTakeovers, m.Findings, m.Objects)
	return m
}

// dropNamespace deletes the counters' series of a namespace gone:
// namespaces come and go (CI's, previews'), their series would pile up.
// Its findings went with its objects. Only seen when namespaces are
// watched (--all-kinds does).
func (m *Metrics) dropNamespace(ns string) {
	for _, c := range []*prometheus.CounterVec{m.Fights, m.ManualEdits, m.ForcedTakeovers} {
		c.DeletePartialMatch(prometheus.Labels{labelNamespace: ns})
	}
}

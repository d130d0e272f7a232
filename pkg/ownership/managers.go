package ownership

import (
	"encoding/json"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Managers the apiserver creates to record history rather than a writer.
const (
	// BeforeFirstApply owns what an object held when it was first
	// server-side applied without managedFields.
	BeforeFirstApply = "before-first-apply"
	// AncientChanges holds the Update managers the apiserver merged
	// beyond its limit of 10.
	AncientChanges = "ancient-changes"
	// ClientSideApplyManager is the manager kubectl's client-side apply
	// writes as when no --field-manager is given.
	ClientSideApplyManager = "kubectl-client-side-apply"
	// HandoverManager holds fields at their values during a handover to
	// a controller (kubectl ssa handover), until the controller writes
	// them.
	HandoverManager = "kubectl-ssa-handover"
)

// AnnotationLimit is the apiserver's limit on the total size of an
// object's annotations, in bytes.
const AnnotationLimit = 262144

// LastAppliedPath is the path of the last-applied annotation.
var LastAppliedPath = fieldpath.MakePathOrDie("metadata", "annotations", LastAppliedAnnotation)

// IsCSAEntry tells whether an entry belongs to client-side apply: an
// Update entry of the main resource that owns the last-applied annotation,
// as client-go's csaupgrade finds them.
func IsCSAEntry(e metav1.ManagedFieldsEntry) bool {
	if e.Operation != metav1.ManagedFieldsOperationUpdate || e.Subresource != "" {
		return false
	}
	s, err := DecodeEntry(e)
	return err == nil && s.Has(LastAppliedPath)
}

// IsCSALeftover tells whether e is client-side apply's entry on an object
// of kind with these annotations and ownerReferences: IsCSAEntry, unless
// the annotation is a controller's copy of its owner's (the StatefulSet
// controller copies a StatefulSet's annotations, last-applied included,
// onto every ControllerRevision it makes). A copy is told by its kind
// (the annotation describes another kind than the object), or by its
// owner: a manager other than kubectl's on an object a controller owns
// (an ownerReference with controller: true).
func IsCSALeftover(e metav1.ManagedFieldsEntry, kind string, annotations map[string]string, refs []metav1.OwnerReference) bool {
	if !IsCSAEntry(e) {
		return false
	}
	var applied struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal([]byte(annotations[LastAppliedAnnotation]), &applied) == nil && applied.Kind != "" && kind != "" && applied.Kind != kind {
		return false
	}
	if e.Manager == ClientSideApplyManager || e.Manager == "kubectl" {
		return true
	}
	for _, r := range refs {
		if r.Controller != nil && *r.Controller {
			return false
		}
	}
	return true
}

// genericManagers are the names the apiserver gives a writer that set no
// field manager: the product of its HTTP user agent.
var genericManagers = []string{"Go-http-client", "unknown", "node-fetch", "python-requests", "curl", "okhttp", "axios", "Apache-HttpClient", "Java", "Mozilla"}

// IsGenericManager tells whether a manager name is a client's user agent
// rather than a name someone chose: nobody can tell such writers apart.
func IsGenericManager(name string) bool {
	for _, g := range genericManagers {
		if name == g || strings.HasPrefix(name, g+"/") {
			return true
		}
	}
	return strings.HasPrefix(name, "python-requests")
}

// KubeControllerManager is the manager of kube-controller-manager's
// controllers (the HPA's writes to /scale among them).
const KubeControllerManager = "kube-controller-manager"

// SystemManagers are the Kubernetes components that write fields of
// objects themselves: their fields are theirs to keep, never drift nor
// something an applier should take.
var SystemManagers = []string{KubeControllerManager, "kube-scheduler", "kubelet", "kube-apiserver", "api-priority-and-fairness-config-producer-v1", "api-priority-and-fairness-config-consumer-v1"}

// IsSystemManager tells whether a manager is one of SystemManagers.
func IsSystemManager(name string) bool { return slices.Contains(SystemManagers, name) }

// RestartedAtPath is where kubectl rollout restart stamps a workload's
// pod template: changing or removing it rolls the pods.
var RestartedAtPath = fieldpath.MakePathOrDie("spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")

// InPodTemplate tells whether p lies in a workload's pod template
// (.spec.template of a Deployment, StatefulSet, DaemonSet, ReplicaSet or
// Job; .spec.jobTemplate of a CronJob): changing it rolls the pods.
func InPodTemplate(p fieldpath.Path) bool {
	if len(p) < 2 || p[0].FieldName == nil || *p[0].FieldName != "spec" || p[1].FieldName == nil {
		return false
	}
	return *p[1].FieldName == "template" || *p[1].FieldName == "jobTemplate"
}

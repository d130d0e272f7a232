package admission

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// The built-in plugins that complete a Pod's create, modelled from the
// apiserver's code (k8s.io/kubernetes plugin/pkg/admission), in the order
// it runs them: LimitRanger, ServiceAccount, Priority,
// DefaultTolerationSeconds, RuntimeClass.
const (
	limitRanger              = "LimitRanger"
	serviceAccount           = "ServiceAccount"
	priority                 = "Priority"
	defaultTolerationSeconds = "DefaultTolerationSeconds"
	runtimeClass             = "RuntimeClass"
)

// PodReads are what admission reads for a Pod's create.
type PodReads struct {
	// ServiceAccount is the Pod's ServiceAccount (nil: it does not
	// exist).
	ServiceAccount *unstructured.Unstructured
	// PriorityClasses are the cluster's (the built-in
	// system-node-critical and system-cluster-critical among them).
	PriorityClasses []*unstructured.Unstructured
	// RuntimeClass is the one the Pod names (nil: it names none, or it
	// does not exist).
	RuntimeClass *unstructured.Unstructured
	// LimitRanges are those of the Pod's namespace.
	LimitRanges []*unstructured.Unstructured
	// Unread says, by plugin, why what it needs could not be read: that
	// plugin's effect is then not known.
	Unread map[string]string
}

const (
	// tokenVolumePrefix is the name the ServiceAccount plugin generates
	// its token volume's from (names.SimpleNameGenerator).
	tokenVolumePrefix = "kube-api-access-"
	tokenMountPath    = "/var/run/secrets/kubernetes.io/serviceaccount"
	mirrorAnnotation  = "kubernetes.io/config.mirror"
	limitRangerNote   = "kubernetes.io/limit-ranger"
	// boundTokenSeconds is serviceaccount.WarnOnlyBoundTokenExpirationSeconds.
	boundTokenSeconds = 3607
)

// tokenVolume is the projected volume the ServiceAccount plugin adds
// (serviceaccount.TokenVolumeSource).
func tokenVolume(name string) map[string]any {
	return map[string]any{
		"name": name,
		"projected": map[string]any{
			"defaultMode": int64(0o644),
			"sources": []any{
				map[string]any{"serviceAccountToken": map[string]any{"path": "token", "expirationSeconds": int64(boundTokenSeconds)}},
				map[string]any{"configMap": map[string]any{"name": "kube-root-ca.crt",
					"items": []any{map[string]any{"key": "ca.crt", "path": "ca.crt"}}}},
				map[string]any{"downwardAPI": map[string]any{
					"items": []any{map[string]any{"path": "namespace",
						"fieldRef": map[string]any{"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}}},
			},
		},
	}
}

// podModel runs the plugins on a copy of the Pod, as the apiserver runs
// them on the decoded (defaulted) object, each on what the one before it
// left.
type podModel struct {
	reads *PodReads
	req   Request
	pod   map[string]any
}

func newPodModel(c *Config, req Request) *podModel {
	m := &podModel{reads: c.Pod, req: req, pod: runtime.DeepCopyJSON(req.Object.Object)}
	// What decoding defaults before admission and the plugins look at:
	// the service account's alias (SetDefaults_PodSpec), a container's
	// requests from its limits (SetDefaults_Pod).
	spec := m.spec()
	if name, _ := spec["serviceAccountName"].(string); name == "" {
		if alias, _ := spec["serviceAccount"].(string); alias != "" {
			spec["serviceAccountName"] = alias
		}
	}
	for _, c := range m.containers() {
		res, _ := c.m["resources"].(map[string]any)
		limits, _ := res["limits"].(map[string]any)
		if limits == nil {
			continue
		}
		requests, _ := res["requests"].(map[string]any)
		if requests == nil {
			requests = map[string]any{}
			res["requests"] = requests
		}
		for k, v := range limits {
			if _, ok := requests[k]; !ok {
				requests[k] = v
			}
		}
	}
	return m
}

func (m *podModel) spec() map[string]any {
	spec, _ := m.pod["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		m.pod["spec"] = spec
	}
	return spec
}

// container is one of the Pod's containers or init containers.
type container struct {
	field, name string
	m           map[string]any
}

func (c container) path(rest ...string) []string {
	return append([]string{"spec", c.field, pathlang.ItemSegment("name", c.name)}, rest...)
}

// containers are the Pod's containers, then its init containers (the
// order LimitRanger annotates them in).
func (m *podModel) containers() []container {
	var out []container
	for _, field := range []string{"containers", "initContainers"} {
		list, _ := m.spec()[field].([]any)
		for _, it := range list {
			if cm, ok := it.(map[string]any); ok {
				name, _ := cm["name"].(string)
				out = append(out, container{field: field, name: name, m: cm})
			}
		}
	}
	return out
}

// forbidden is admission.NewForbidden's message for the Pod.
func (m *podModel) forbidden(format string, args ...any) string {
	return apierrors.NewForbidden(pods, m.req.Object.GetName(), fmt.Errorf(format, args...)).Error()
}

// recorder makes a plugin's changes on the model and keeps them as ops.
type recorder struct {
	m   *podModel
	ops []v1alpha1.AdmissionOp
}

// set sets path to v: OpSet where it is absent, OpReplace where it
// holds another value.
func (r *recorder) set(path []string, v any) {
	op := v1alpha1.OpSet
	if cur, found := lookup(r.m.pod, path); found {
		if reflect.DeepEqual(cur, v) {
			return
		}
		op = v1alpha1.OpReplace
	}
	r.add(v1alpha1.AdmissionOp{Op: op, Path: path, Value: v})
}

func (r *recorder) add(op v1alpha1.AdmissionOp) {
	applyOp(op, r.m.pod)
	r.ops = append(r.ops, op)
}

func (r *recorder) step(name string) *v1alpha1.AdmissionStep {
	if len(r.ops) == 0 {
		return nil
	}
	return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: name, Effect: v1alpha1.EffectMutates, Ops: r.ops}
}

// unread is the step of a plugin whose reads failed.
func (m *podModel) unread(name string) *v1alpha1.AdmissionStep {
	why, ok := m.reads.Unread[name]
	if !ok {
		return nil
	}
	return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: name, Effect: v1alpha1.EffectMayMutate, Caveats: []string{why + ": what it sets or refuses is not known"}}
}

// podMutating runs the mutating plugins on a Pod's create (on an update,
// those that act on one); the model holds the Pod they leave. Without
// reads (c.Pod nil) a create is not modelled.
func podMutating(c *Config, req Request) ([]v1alpha1.AdmissionStep, *podModel) {
	if req.Old == nil && c.Pod == nil {
		return []v1alpha1.AdmissionStep{{Kind: v1alpha1.BuiltinPlugin, Name: "ServiceAccount+Priority+DefaultTolerationSeconds+LimitRanger+RuntimeClass", Effect: v1alpha1.EffectMayMutate,
			Caveats: []string{"what a Pod's create reads (its ServiceAccount, the PriorityClasses, its RuntimeClass, the namespace's LimitRanges) was not read: not modelled here"}}}, nil
	}
	if c.Pod == nil {
		c = &Config{Pod: &PodReads{}}
	}
	m := newPodModel(c, req)
	plugins := []func() *v1alpha1.AdmissionStep{m.limitRanger, m.serviceAccount, m.priority, m.defaultTolerationSeconds, m.runtimeClass}
	if req.Old != nil {
		plugins = []func() *v1alpha1.AdmissionStep{m.priorityOnUpdate, m.defaultTolerationSeconds}
	}
	var steps []v1alpha1.AdmissionStep
	for _, plugin := range plugins {
		s := plugin()
		if s == nil {
			continue
		}
		steps = append(steps, *s)
		if s.Effect == v1alpha1.EffectDenies {
			break
		}
	}
	return steps, m
}

// deniedBy is the denial of the first step that refuses ("": none).
func deniedBy(steps []v1alpha1.AdmissionStep) string {
	for _, s := range steps {
		if s.Effect == v1alpha1.EffectDenies {
			return s.Message
		}
	}
	return ""
}

// validatingBuiltins are the built-in plugins' validations, in the
// apiserver's order: LimitRanger, PodSecurity, RuntimeClass (the
// ServiceAccount plugin checks what it checks when it mutates).
func validatingBuiltins(c *Config, req Request) []v1alpha1.AdmissionStep {
	var steps []v1alpha1.AdmissionStep
	var m *podModel
	if req.Resource.GroupResource() == pods && req.Subresource == "" && req.Old == nil && c.Pod != nil {
		_, m = podMutating(c, req)
		if s := m.validateLimits(); s != nil {
			steps = append(steps, *s)
		}
	}
	if ps := podSecurityStep(req); ps != nil {
		steps = append(steps, *ps)
	}
	if m != nil {
		if s := m.validateOverhead(); s != nil {
			steps = append(steps, *s)
		}
	}
	return steps
}

// limitRanger is LimitRanger's mutation: the Container defaults of each
// LimitRange filled into the containers that lack them, and the
// annotation that says which.
func (m *podModel) limitRanger() *v1alpha1.AdmissionStep {
	if s := m.unread(limitRanger); s != nil {
		return s
	}
	r := &recorder{m: m}
	setters := 0
	for _, lr := range sorted(m.reads.LimitRanges) {
		requests, limits := containerDefaults(lr)
		var notes []string
		for _, c := range m.containers() {
			var setLimits, setRequests []string
			for _, k := range sortedKeys(limits) {
				if _, found := lookup(m.pod, c.path("resources", "limits", k)); !found {
					r.set(c.path("resources", "limits", k), limits[k])
					setLimits = append(setLimits, k)
				}
			}
			for _, k := range sortedKeys(requests) {
				if _, found := lookup(m.pod, c.path("resources", "requests", k)); !found {
					r.set(c.path("resources", "requests", k), requests[k])
					setRequests = append(setRequests, k)
				}
			}
			kind := "container"
			if c.field == "initContainers" {
				kind = "init container"
			}
			if len(setRequests) > 0 {
				notes = append(notes, fmt.Sprintf("%s request for %s %s", strings.Join(setRequests, ", "), kind, c.name))
			}
			if len(setLimits) > 0 {
				notes = append(notes, fmt.Sprintf("%s limit for %s %s", strings.Join(setLimits, ", "), kind, c.name))
			}
		}
		if len(notes) > 0 {
			setters++
			r.set([]string{"metadata", "annotations", limitRangerNote}, "LimitRanger plugin set: "+strings.Join(notes, "; "))
		}
	}
	s := r.step(limitRanger)
	if s != nil && setters > 1 {
		// The apiserver lists them from its cache, in no fixed order:
		// which sets a resource both default, and the annotation, is not
		// known.
		s.Effect = v1alpha1.EffectMayMutate
		s.Caveats = []string{fmt.Sprintf("%d LimitRanges of namespace %s set defaults for this Pod, and the apiserver applies them in no fixed order", setters, m.req.Object.GetNamespace())}
	}
	return s
}

// containerDefaults are the default requests and limits of a LimitRange's
// Container items (defaultContainerResourceRequirements).
func containerDefaults(lr *unstructured.Unstructured) (requests, limits map[string]any) {
	requests, limits = map[string]any{}, map[string]any{}
	items, _, _ := unstructured.NestedSlice(lr.Object, "spec", "limits")
	for _, it := range items {
		item, _ := it.(map[string]any)
		if item["type"] != string(corev1.LimitTypeContainer) {
			continue
		}
		for from, to := range map[string]map[string]any{"defaultRequest": requests, "default": limits} {
			vals, _ := item[from].(map[string]any)
			for k, v := range vals {
				to[k] = v
			}
		}
	}
	return requests, limits
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// serviceAccount is the ServiceAccount plugin's mutation: the default
// service account, its token volume mounted into every container, its
// image pull secrets; then its check of the service account.
func (m *podModel) serviceAccount() *v1alpha1.AdmissionStep {
	spec := m.spec()
	annotations, _, _ := unstructured.NestedStringMap(m.pod, "metadata", "annotations")
	if _, mirror := annotations[mirrorAnnotation]; mirror {
		if name, _ := spec["serviceAccountName"].(string); name != "" {
			return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: serviceAccount, Effect: v1alpha1.EffectDenies, Message: m.forbidden("a mirror pod may not reference service accounts")}
		}
		return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: serviceAccount, Effect: v1alpha1.EffectMayDeny,
			Caveats: []string{"a mirror pod may not reference secrets or project a service account token: not checked here"}}
	}
	r := &recorder{m: m}
	name, _ := spec["serviceAccountName"].(string)
	if name == "" {
		name = "default"
		r.set([]string{"spec", "serviceAccountName"}, name)
		r.set([]string{"spec", "serviceAccount"}, name)
	}
	if s := m.unread(serviceAccount); s != nil {
		s.Ops = r.ops
		return s
	}
	sa := m.reads.ServiceAccount
	ns := m.req.Object.GetNamespace()
	if sa == nil {
		return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: serviceAccount, Effect: v1alpha1.EffectDenies,
			Message: m.forbidden("error looking up service account %s/%s: serviceaccount %q not found", ns, name, name)}
	}
	var unknown []pathlang.Path
	if automount(sa, spec) {
		unknown = m.mountToken(r)
	}
	if list, _ := spec["imagePullSecrets"].([]any); len(list) == 0 {
		secrets, _, _ := unstructured.NestedSlice(sa.Object, "imagePullSecrets")
		var refs []any
		for _, s := range secrets {
			sm, _ := s.(map[string]any)
			n, _ := sm["name"].(string)
			refs = append(refs, map[string]any{"name": n})
		}
		if len(refs) > 0 {
			r.set([]string{"spec", "imagePullSecrets"}, refs)
		}
	}
	if enforce, _ := strconv.ParseBool(sa.GetAnnotations()["kubernetes.io/enforce-mountable-secrets"]); enforce {
		if msg := m.unmountableSecret(sa); msg != "" {
			return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: serviceAccount, Effect: v1alpha1.EffectDenies, Message: m.forbidden("%s", msg)}
		}
	}
	s := r.step(serviceAccount)
	if s != nil {
		s.Unknown = unknown
	}
	return s
}

// automount is shouldAutomount: the Pod's preference, else the service
// account's, else true.
func automount(sa *unstructured.Unstructured, spec map[string]any) bool {
	if v, ok := spec["automountServiceAccountToken"].(bool); ok {
		return v
	}
	if v, ok, _ := unstructured.NestedBool(sa.Object, "automountServiceAccountToken"); ok {
		return v
	}
	return true
}

// mountToken is mountServiceAccountToken: every container (init
// containers first) that mounts nothing at the token's path mounts the
// token volume, which is added unless the Pod has one; its name is
// generated, so the paths that hold it are returned as unknown.
func (m *podModel) mountToken(r *recorder) []pathlang.Path {
	spec := m.spec()
	volumeName, generated := "", false
	volumes, _ := spec["volumes"].([]any)
	for _, v := range volumes {
		vm, _ := v.(map[string]any)
		if n, _ := vm["name"].(string); strings.HasPrefix(n, tokenVolumePrefix) {
			volumeName = n
			break
		}
	}
	hasVolume := volumeName != ""
	if !hasVolume {
		volumeName, generated = tokenVolumePrefix, true
	}
	genName := ""
	if generated {
		genName = tokenVolumePrefix
	}
	var unknown []pathlang.Path
	needed := false
	cs := m.containers()
	// The plugin mounts into init containers first.
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].field == "initContainers" && cs[j].field != "initContainers" })
	for _, c := range cs {
		mounts, _ := c.m["volumeMounts"].([]any)
		mounted := false
		for _, mt := range mounts {
			mm, _ := mt.(map[string]any)
			if mm["mountPath"] == tokenMountPath {
				mounted = true
				break
			}
		}
		if mounted {
			continue
		}
		needed = true
		r.add(v1alpha1.AdmissionOp{Op: v1alpha1.OpAppend, Path: c.path("volumeMounts"), GenerateName: genName,
			Value: map[string]any{"name": volumeName, "readOnly": true, "mountPath": tokenMountPath}})
		if generated {
			unknown = append(unknown, pathlang.FromSegments(c.path("volumeMounts", pathlang.ItemSegment("mountPath", tokenMountPath), "name")))
		}
	}
	if !hasVolume && needed {
		r.add(v1alpha1.AdmissionOp{Op: v1alpha1.OpAppend, Path: []string{"spec", "volumes"}, GenerateName: genName, Value: tokenVolume(volumeName)})
		unknown = append([]pathlang.Path{pathlang.FromSegments([]string{"spec", "volumes", pathlang.ItemSegment("name", volumeName), "name"})}, unknown...)
	}
	return unknown
}

// unmountableSecret is limitSecretReferences: the first secret the Pod
// references that a service account which enforces mountable secrets
// does not list ("": none).
func (m *podModel) unmountableSecret(sa *unstructured.Unstructured) string {
	names := func(path string) map[string]bool {
		out := map[string]bool{}
		list, _, _ := unstructured.NestedSlice(sa.Object, path)
		for _, it := range list {
			im, _ := it.(map[string]any)
			if n, ok := im["name"].(string); ok {
				out[n] = true
			}
		}
		return out
	}
	mountable := names("secrets")
	spec := m.spec()
	volumes, _ := spec["volumes"].([]any)
	for _, v := range volumes {
		vm, _ := v.(map[string]any)
		if secret, ok := vm["secret"].(map[string]any); ok {
			if n, _ := secret["secretName"].(string); !mountable[n] {
				return fmt.Sprintf("volume with secret.secretName=%q is not allowed because service account %s does not reference that secret", n, sa.GetName())
			}
		}
	}
	for _, field := range []string{"initContainers", "containers"} {
		kind := "container"
		if field == "initContainers" {
			kind = "init container"
		}
		list, _ := spec[field].([]any)
		for _, it := range list {
			c, _ := it.(map[string]any)
			cname, _ := c["name"].(string)
			env, _ := c["env"].([]any)
			for _, e := range env {
				em, _ := e.(map[string]any)
				n, found, _ := unstructured.NestedString(em, "valueFrom", "secretKeyRef", "name")
				if found && !mountable[n] {
					return fmt.Sprintf("%s %s with envVar %s referencing secret.secretName=%q is not allowed because service account %s does not reference that secret", kind, cname, em["name"], n, sa.GetName())
				}
			}
			envFrom, _ := c["envFrom"].([]any)
			for _, e := range envFrom {
				em, _ := e.(map[string]any)
				if ref, ok := em["secretRef"].(map[string]any); ok {
					if n, _ := ref["name"].(string); !mountable[n] {
						return fmt.Sprintf("%s %s with envFrom referencing secret.secretName=%q is not allowed because service account %s does not reference that secret", kind, cname, n, sa.GetName())
					}
				}
			}
		}
	}
	pullable := names("imagePullSecrets")
	refs, _ := spec["imagePullSecrets"].([]any)
	for i, ref := range refs {
		rm, _ := ref.(map[string]any)
		if n, _ := rm["name"].(string); !pullable[n] {
			return fmt.Sprintf("imagePullSecrets[%d].name=%q is not allowed because service account %s does not reference that imagePullSecret", i, n, sa.GetName())
		}
	}
	return ""
}

// priority is the Priority plugin on a create: the priority (and
// preemption policy) of the named PriorityClass, else of the global
// default (the lowest valued one, if a race made several), else 0.
func (m *podModel) priority() *v1alpha1.AdmissionStep {
	if s := m.unread(priority); s != nil {
		return s
	}
	spec := m.spec()
	name, _ := spec["priorityClassName"].(string)
	var class *unstructured.Unstructured
	var caveats []string
	if name == "" {
		var lowest []*unstructured.Unstructured
		for _, pc := range sorted(m.reads.PriorityClasses) {
			if def, _, _ := unstructured.NestedBool(pc.Object, "globalDefault"); !def {
				continue
			}
			switch {
			case len(lowest) == 0 || classValue(pc) < classValue(lowest[0]):
				lowest = []*unstructured.Unstructured{pc}
			case classValue(pc) == classValue(lowest[0]):
				lowest = append(lowest, pc)
			}
		}
		if len(lowest) > 1 {
			caveats = append(caveats, fmt.Sprintf("%d PriorityClasses are the global default with value %d: the apiserver takes any of them", len(lowest), classValue(lowest[0])))
		}
		if len(lowest) > 0 {
			class = lowest[0]
		}
	} else {
		for _, pc := range m.reads.PriorityClasses {
			if pc.GetName() == name {
				class = pc
			}
		}
		if class == nil {
			return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: priority, Effect: v1alpha1.EffectDenies, Message: m.forbidden("no PriorityClass with name %s was found", name)}
		}
	}
	value, policy := int64(0), string(corev1.PreemptLowerPriority)
	if class != nil {
		value = classValue(class)
		policy, _, _ = unstructured.NestedString(class.Object, "preemptionPolicy")
	}
	if cur, ok := spec["priority"]; ok && fmt.Sprint(cur) != strconv.FormatInt(value, 10) {
		return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: priority, Effect: v1alpha1.EffectDenies,
			Message: m.forbidden("the integer value of priority (%v) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", cur, value)}
	}
	if cur, ok := spec["preemptionPolicy"].(string); ok && policy != "" && cur != policy {
		return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: priority, Effect: v1alpha1.EffectDenies,
			Message: m.forbidden("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", cur, policy)}
	}
	r := &recorder{m: m}
	if class != nil && name == "" {
		r.set([]string{"spec", "priorityClassName"}, class.GetName())
	}
	r.set([]string{"spec", "priority"}, value)
	if policy != "" {
		r.set([]string{"spec", "preemptionPolicy"}, policy)
	}
	s := r.step(priority)
	if s != nil && len(caveats) > 0 {
		s.Effect, s.Caveats = v1alpha1.EffectMayMutate, caveats
	}
	return s
}

// classValue is a PriorityClass's value (an int64 as the server sends
// it, a float64 as JSON decodes it).
func classValue(pc *unstructured.Unstructured) int64 {
	switch v := pc.Object["value"].(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return 0
}

// priorityOnUpdate: an update keeps the priority (and preemption policy)
// the create set when the new object has none.
func (m *podModel) priorityOnUpdate() *v1alpha1.AdmissionStep {
	r := &recorder{m: m}
	for _, f := range []string{"priority", "preemptionPolicy"} {
		old, found, _ := unstructured.NestedFieldCopy(m.req.Old.Object, "spec", f)
		if _, has := m.spec()[f]; found && !has {
			r.set([]string{"spec", f}, old)
		}
	}
	return r.step(priority)
}

// defaultTolerationSeconds adds the NoExecute tolerations of a not-ready
// and an unreachable node, for 300 seconds, unless the Pod tolerates them
// (a toleration of the key, or of any key, with the effect NoExecute or
// any).
func (m *podModel) defaultTolerationSeconds() *v1alpha1.AdmissionStep {
	tolerations, _ := m.spec()["tolerations"].([]any)
	_, atomic, _ := unstructured.NestedFieldNoCopy(m.req.Object.Object, "spec", "tolerations")
	r := &recorder{m: m}
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		tolerated := false
		for _, t := range tolerations {
			tm, _ := t.(map[string]any)
			k, _ := tm["key"].(string)
			e, _ := tm["effect"].(string)
			if (k == key || k == "") && (e == string(corev1.TaintEffectNoExecute) || e == "") {
				tolerated = true
			}
		}
		if !tolerated {
			r.add(v1alpha1.AdmissionOp{Op: v1alpha1.OpAppend, Path: []string{"spec", "tolerations"}, Atomic: atomic,
				Value: map[string]any{"key": key, "operator": string(corev1.TolerationOpExists), "effect": string(corev1.TaintEffectNoExecute), "tolerationSeconds": int64(300)}})
		}
	}
	return r.step(defaultTolerationSeconds)
}

// runtimeClass is the RuntimeClass plugin's mutation: the class's pod
// overhead, and its scheduling (node selector and tolerations) merged
// into the Pod's.
func (m *podModel) runtimeClass() *v1alpha1.AdmissionStep {
	spec := m.spec()
	name, named := spec["runtimeClassName"].(string)
	if !named {
		return nil
	}
	if s := m.unread(runtimeClass); s != nil {
		return s
	}
	rc := m.reads.RuntimeClass
	if rc == nil {
		return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: runtimeClass, Effect: v1alpha1.EffectDenies, Message: m.forbidden("pod rejected: RuntimeClass %q not found", name)}
	}
	r := &recorder{m: m}
	if overhead, found, _ := unstructured.NestedFieldCopy(rc.Object, "overhead"); found && overhead != nil {
		fixed, _, _ := unstructured.NestedMap(rc.Object, "overhead", "podFixed")
		cur, _ := spec["overhead"].(map[string]any)
		if len(cur) > 0 && !sameResources(fixed, cur) {
			return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: runtimeClass, Effect: v1alpha1.EffectDenies, Message: m.forbidden("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")}
		}
		if fixed != nil && len(cur) == 0 {
			r.set([]string{"spec", "overhead"}, fixed)
		}
	}
	if scheduling, found, _ := unstructured.NestedMap(rc.Object, "scheduling"); found && scheduling != nil {
		selector, _ := scheduling["nodeSelector"].(map[string]any)
		cur, has := spec["nodeSelector"].(map[string]any)
		switch {
		case !has && selector != nil:
			r.set([]string{"spec", "nodeSelector"}, selector)
		case has:
			for _, k := range sortedKeys(selector) {
				if v, ok := cur[k]; ok && v != selector[k] {
					return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: runtimeClass, Effect: v1alpha1.EffectDenies,
						Message: m.forbidden("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, selector[k], k, v)}
				}
				r.set([]string{"spec", "nodeSelector", k}, selector[k])
			}
		}
		extra, _ := scheduling["tolerations"].([]any)
		before, _ := spec["tolerations"].([]any)
		merged := mergeTolerations(before, extra)
		_, atomic, _ := unstructured.NestedFieldNoCopy(m.req.Object.Object, "spec", "tolerations")
		switch {
		case len(merged) >= len(before) && reflect.DeepEqual(merged[:len(before)], before):
			for _, t := range merged[len(before):] {
				r.add(v1alpha1.AdmissionOp{Op: v1alpha1.OpAppend, Path: []string{"spec", "tolerations"}, Atomic: atomic, Value: t})
			}
		default:
			r.add(v1alpha1.AdmissionOp{Op: v1alpha1.OpReplace, Path: []string{"spec", "tolerations"}, Atomic: atomic, Value: merged})
		}
	}
	return r.step(runtimeClass)
}

// sameResources is apiequality.Semantic.DeepEqual of two resource lists:
// the same names, and quantities that compare equal.
func sameResources(a, b map[string]any) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok {
			return false
		}
		aq, aerr := quantity(av)
		bq, berr := quantity(bv)
		if aerr != nil || berr != nil || aq.Cmp(bq) != 0 {
			return false
		}
	}
	return true
}

func quantity(v any) (resource.Quantity, error) {
	return resource.ParseQuantity(fmt.Sprint(v))
}

// mergeTolerations is pkg/util/tolerations.MergeTolerations: first then
// second, without those another one already covers.
func mergeTolerations(first, second []any) []any {
	all := append(append([]any{}, first...), second...)
	typed := make([]corev1.Toleration, len(all))
	for i, t := range all {
		tm, _ := t.(map[string]any)
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(tm, &typed[i])
	}
	var merged []any
	var kept []corev1.Toleration
next:
	for i, t := range typed {
		for _, k := range kept {
			if isSuperset(k, t) {
				continue next
			}
		}
		for _, t2 := range typed[i+1:] {
			if !reflect.DeepEqual(t, t2) && isSuperset(t2, t) {
				continue next
			}
		}
		kept = append(kept, t)
		merged = append(merged, all[i])
	}
	return merged
}

// isSuperset is pkg/util/tolerations' isSuperset: whether ss tolerates
// everything t does.
func isSuperset(ss, t corev1.Toleration) bool {
	if reflect.DeepEqual(t, ss) {
		return true
	}
	if t.Key != ss.Key && (ss.Key != "" || ss.Operator != corev1.TolerationOpExists) {
		return false
	}
	if t.Effect != ss.Effect && ss.Effect != "" {
		return false
	}
	if ss.Effect == corev1.TaintEffectNoExecute && ss.TolerationSeconds != nil {
		if t.TolerationSeconds == nil || *t.TolerationSeconds > *ss.TolerationSeconds {
			return false
		}
	}
	switch ss.Operator {
	case corev1.TolerationOpEqual, "":
		return t.Operator == corev1.TolerationOpEqual && t.Value == ss.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}

// validateOverhead is the RuntimeClass plugin's validation: a Pod may
// have an overhead only from its RuntimeClass.
func (m *podModel) validateOverhead() *v1alpha1.AdmissionStep {
	spec := m.spec()
	if _, has := spec["overhead"]; !has {
		return nil
	}
	if _, named := spec["runtimeClassName"].(string); named {
		if m.reads.RuntimeClass == nil {
			return nil // refused, or not known, before
		}
		if overhead, found, _ := unstructured.NestedFieldNoCopy(m.reads.RuntimeClass.Object, "overhead"); found && overhead != nil {
			return nil // set from it
		}
	}
	return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: runtimeClass, Effect: v1alpha1.EffectDenies,
		Message: m.forbidden("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")}
}

// AdoptGeneratedNames gives the names the prediction could not know (a
// token volume's) the values the server generated, as read from its
// object, so that the two compare on everything else: where predicted
// holds a generated name's prefix, server's item with that prefix, which
// predicted does not hold, lends its name.
func AdoptGeneratedNames(r *v1alpha1.AdmissionReport, predicted, server *unstructured.Unstructured) {
	if r == nil {
		return
	}
	for _, s := range r.Steps {
		for _, op := range s.Ops {
			if op.GenerateName == "" {
				continue
			}
			name, ok := generatedIn(op, predicted.Object, server.Object)
			if !ok {
				continue
			}
			cur, _ := lookup(predicted.Object, op.Path)
			list, _ := cur.([]any)
			for _, it := range list {
				if im, _ := it.(map[string]any); im != nil && im["name"] == op.GenerateName {
					im["name"] = name
				}
			}
		}
	}
}

// generatedIn is the name of server's item at op's list that has op's
// prefix and that predicted does not hold.
func generatedIn(op v1alpha1.AdmissionOp, predicted, server map[string]any) (string, bool) {
	names := func(obj map[string]any) []string {
		cur, _ := lookup(obj, op.Path)
		list, _ := cur.([]any)
		var out []string
		for _, it := range list {
			im, _ := it.(map[string]any)
			if n, _ := im["name"].(string); n != "" {
				out = append(out, n)
			}
		}
		return out
	}
	held := map[string]bool{}
	for _, n := range names(predicted) {
		held[n] = true
	}
	for _, n := range names(server) {
		if strings.HasPrefix(n, op.GenerateName) && len(n) > len(op.GenerateName) && !held[n] {
			return n, true
		}
	}
	return "", false
}

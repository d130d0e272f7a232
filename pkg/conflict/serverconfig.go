package conflict

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// serverSetting is a check of the apiserver's validation that its own
// configuration decides (a flag, what it holds for other objects): no
// prediction knows it, so the prediction assumes it allows the apply, says
// so, and --verify takes the server's refusal for what it is rather than
// the prediction's error.
type serverSetting struct {
	// name is the setting as the user looks it up.
	name string
	// decides says what it decides, for the caveat.
	decides string
	// refusals are the words of the refusals it causes (the apiserver's
	// validation and allocators, k8s.io/kubernetes pkg/apis/core/validation
	// and pkg/registry/core/service).
	refusals []string
	// uses lists the paths of the predicted object (result) that depend
	// on it, given the object before the apply (live, nil on create).
	uses func(result, live *unstructured.Unstructured) []fieldpath.Path
}

var serverSettings = []serverSetting{
	{name: "--allow-privileged", decides: "whether privileged (and Windows hostProcess) containers are allowed",
		refusals: []string{"disallowed by cluster policy"}, uses: privilegedPaths},
	{name: "--service-node-port-range", decides: "which node ports a Service may ask for (and whether another Service holds it)",
		refusals: []string{"provided port is not in the valid range", "provided port is already allocated"}, uses: askedNodePorts},
	{name: "--service-cluster-ip-range", decides: "which cluster IPs a Service may ask for (and whether another Service holds it)",
		refusals: []string{"is not in the valid range. The range of valid IPs", "provided IP is already allocated"}, uses: askedClusterIPs},
}

// serverSettingCaveats say which fields of the predicted object depend on
// the apiserver's configuration.
func serverSettingCaveats(result, live *unstructured.Unstructured) []string {
	var out []string
	for _, s := range serverSettings {
		paths := s.uses(result, live)
		if len(paths) == 0 {
			continue
		}
		names := make([]string, len(paths))
		for i, p := range paths {
			names[i] = pathlang.Path(p).String()
		}
		out = append(out, fmt.Sprintf("%s: the apiserver's flag %s decides %s, which is not known here: the prediction assumes it allows the apply (--verify asks the server)",
			strings.Join(names, ", "), s.name, s.decides))
	}
	return out
}

// refusedBy names the settings that explain the server's refusal (msg)
// of the predicted object: the refusal is theirs, and the object uses
// them.
func refusedBy(result, live *unstructured.Unstructured, msg string) []string {
	var out []string
	if result == nil {
		return nil
	}
	for _, s := range serverSettings {
		if slices.ContainsFunc(s.refusals, func(r string) bool { return strings.Contains(msg, r) }) && len(s.uses(result, live)) > 0 {
			out = append(out, s.name)
		}
	}
	return out
}

// privilegedPaths are the privileged and hostProcess settings of a Pod's
// (or a template's) containers.
func privilegedPaths(result, _ *unstructured.Unstructured) []fieldpath.Path {
	gvk := result.GroupVersionKind()
	at := defaults.PodSpecPath(gvk.Group, gvk.Kind)
	if at == nil {
		return nil
	}
	base := fieldpath.MakePathOrDie(stringsToElems(at)...)
	spec, _, _ := unstructured.NestedMap(result.Object, at...)
	var out []fieldpath.Path
	if on, _, _ := unstructured.NestedBool(spec, "securityContext", "windowsOptions", "hostProcess"); on {
		out = append(out, append(base.Copy(), fieldpath.MakePathOrDie("securityContext", "windowsOptions", "hostProcess")...))
	}
	for _, field := range []string{"initContainers", "containers", "ephemeralContainers"} {
		cs, _ := spec[field].([]any)
		for _, c := range cs {
			cm, _ := c.(map[string]any)
			name, _ := cm["name"].(string)
			item := append(base.Copy(), fieldpath.MakePathOrDie(field, fieldpath.KeyByFields("name", name), "securityContext")...)
			if on, _, _ := unstructured.NestedBool(cm, "securityContext", "privileged"); on {
				out = append(out, append(item.Copy(), fieldpath.MakePathOrDie("privileged")...))
			}
			if on, _, _ := unstructured.NestedBool(cm, "securityContext", "windowsOptions", "hostProcess"); on {
				out = append(out, append(item.Copy(), fieldpath.MakePathOrDie("windowsOptions", "hostProcess")...))
			}
		}
	}
	return out
}

// askedNodePorts are the node ports a Service asks for that it does not
// hold already (the live object's).
func askedNodePorts(result, live *unstructured.Unstructured) []fieldpath.Path {
	if !isService(result) {
		return nil
	}
	held := map[string]bool{}
	if live != nil {
		for _, n := range serviceNodePorts(live) {
			held[n] = true
		}
	}
	var out []fieldpath.Path
	ports, _, _ := unstructured.NestedSlice(result.Object, "spec", "ports")
	for _, p := range ports {
		m, _ := p.(map[string]any)
		if n := fmt.Sprint(m["nodePort"]); m["nodePort"] != nil && n != "0" && !held[n] {
			protocol, _ := m["protocol"].(string)
			if protocol == "" {
				protocol = "TCP"
			}
			out = append(out, fieldpath.MakePathOrDie("spec", "ports", fieldpath.KeyByFields("port", m["port"], "protocol", protocol), "nodePort"))
		}
	}
	if hc, ok, _ := unstructured.NestedFieldNoCopy(result.Object, "spec", "healthCheckNodePort"); ok && hc != nil && fmt.Sprint(hc) != "0" && !held[fmt.Sprint(hc)] {
		out = append(out, fieldpath.MakePathOrDie("spec", "healthCheckNodePort"))
	}
	return out
}

// serviceNodePorts are the node ports a Service holds.
func serviceNodePorts(svc *unstructured.Unstructured) []string {
	var out []string
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	for _, p := range ports {
		m, _ := p.(map[string]any)
		if m["nodePort"] != nil {
			out = append(out, fmt.Sprint(m["nodePort"]))
		}
	}
	if hc, ok, _ := unstructured.NestedFieldNoCopy(svc.Object, "spec", "healthCheckNodePort"); ok && hc != nil {
		out = append(out, fmt.Sprint(hc))
	}
	return out
}

// askedClusterIPs are the cluster IPs a Service asks for that it does
// not hold already ("None", headless, is not one).
func askedClusterIPs(result, live *unstructured.Unstructured) []fieldpath.Path {
	if !isService(result) {
		return nil
	}
	var out []fieldpath.Path
	for _, f := range []string{"clusterIP", "clusterIPs"} {
		v, ok, _ := unstructured.NestedFieldNoCopy(result.Object, "spec", f)
		if !ok || !asksIP(v) {
			continue
		}
		if live != nil {
			if was, _, _ := unstructured.NestedFieldNoCopy(live.Object, "spec", f); defaults.SameJSON(was, v) {
				continue
			}
		}
		out = append(out, fieldpath.MakePathOrDie("spec", f))
	}
	return out
}

// asksIP tells whether a clusterIP or clusterIPs value names an address.
func asksIP(v any) bool {
	switch t := v.(type) {
	case string:
		return t != "" && t != "None"
	case []any:
		return slices.ContainsFunc(t, asksIP)
	}
	return false
}

func isService(u *unstructured.Unstructured) bool {
	return u.GetAPIVersion() == "v1" && u.GetKind() == "Service"
}

func stringsToElems(names []string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out
}

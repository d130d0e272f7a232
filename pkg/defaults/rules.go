package defaults

import (
	"encoding/base64"
	"regexp"
	"strings"
	"sync"
)

// Rule computes a default that depends on other fields, the way the
// apiserver's defaulting does. The generator uses a rule for a path only
// after checking it against the real defaulting on every probe object.
type Rule struct {
	// Name is how the generated data refers to it.
	Name string
	// Paths are the pattern suffixes it may apply to.
	Paths []string
	// Depends says what the default depends on, for people.
	Depends string
	// Eval returns the default of the field named name (the key, for a
	// map entry) given its ancestors (see Source.Removal); set is false
	// when the field stays absent, known false when the rule can't tell.
	Eval func(name string, ancestors []any) (v any, set, known bool)
}

// Rules are the hand-written rules, in the order the generator tries them.
var Rules = []Rule{
	{
		Name:    "imagePullPolicy",
		Paths:   []string{"containers[*].imagePullPolicy", "initContainers[*].imagePullPolicy", "ephemeralContainers[*].imagePullPolicy"},
		Depends: "the image's tag (Always for :latest or no tag, else IfNotPresent)",
		Eval: func(_ string, anc []any) (any, bool, bool) {
			image, _ := parent(anc)["image"].(string)
			return pullPolicy(image), true, true
		},
	},
	{
		Name:    "imageVolumePullPolicy",
		Paths:   []string{"volumes[*].image.pullPolicy"},
		Depends: "the image's tag (Always for :latest or no tag, else IfNotPresent)",
		Eval: func(_ string, anc []any) (any, bool, bool) {
			image, _ := parent(anc)["reference"].(string)
			return pullPolicy(image), true, true
		},
	},
	{
		Name:    "servicePortTargetPort",
		Paths:   []string{".spec.ports[*].targetPort"},
		Depends: "the port (targetPort defaults to it)",
		Eval: func(_ string, anc []any) (any, bool, bool) {
			port, ok := parent(anc)["port"]
			if !ok {
				return int64(0), true, true
			}
			return port, true, true
		},
	},
	{
		Name:    "hostNetworkHostPort",
		Paths:   []string{"containers[*].ports[*].hostPort", "initContainers[*].ports[*].hostPort"},
		Depends: "hostNetwork and the containerPort (with hostNetwork, hostPort defaults to containerPort)",
		Eval: func(_ string, anc []any) (any, bool, bool) {
			// ancestors: ... podSpec, containers, container, ports, port
			if len(anc) < 5 {
				return nil, false, false
			}
			spec, _ := anc[len(anc)-5].(map[string]any)
			if hn, _ := spec["hostNetwork"].(bool); !hn {
				return nil, false, true
			}
			port, ok := parent(anc)["containerPort"]
			if !ok || isZero(port) {
				return nil, false, true
			}
			return port, true, true
		},
	},
	{
		Name:    "requestsFromLimits",
		Paths:   []string{"resources.requests.*", "resources.requests"},
		Depends: "the limits (a missing request defaults to the limit)",
		Eval: func(name string, anc []any) (any, bool, bool) {
			if name == "requests" {
				limits, _ := parent(anc)["limits"].(map[string]any)
				if len(limits) == 0 {
					return nil, false, true
				}
				return copyValue(limits), true, true
			}
			// ancestors: ... resources, requests
			if len(anc) < 2 {
				return nil, false, false
			}
			resources, _ := anc[len(anc)-2].(map[string]any)
			limits, _ := resources["limits"].(map[string]any)
			v, ok := limits[name]
			if !ok {
				return nil, false, true
			}
			return v, true, true
		},
	},
	{
		Name:    "serviceAccountAlias",
		Paths:   []string{"spec.serviceAccount", "spec.serviceAccountName"},
		Depends: "the other of serviceAccount and serviceAccountName (each defaults to the other)",
		Eval: func(name string, anc []any) (any, bool, bool) {
			other := "serviceAccountName"
			if name == other {
				other = "serviceAccount"
			}
			v, _ := parent(anc)[other].(string)
			if v == "" {
				return nil, false, true
			}
			return v, true, true
		},
	},
	{
		Name:    "namespaceNameLabel",
		Paths:   []string{".metadata.labels.*", ".metadata.labels"},
		Depends: "the namespace's name (label kubernetes.io/metadata.name)",
		Eval: func(name string, anc []any) (any, bool, bool) {
			ns := objectName(anc)
			switch {
			case ns == "":
				return nil, false, true
			case name == "labels":
				return map[string]any{namespaceNameLabel: ns}, true, true
			case name == namespaceNameLabel:
				return ns, true, true
			}
			return nil, false, true
		},
	},
	{
		Name:    "templateLabels",
		Paths:   []string{".metadata.labels", ".spec.selector", ".metadata.labels.*", ".spec.selector.*"},
		Depends: "the pod template's labels (empty labels or an empty selector default to them)",
		Eval: func(name string, anc []any) (any, bool, bool) {
			root, _ := first(anc).(map[string]any)
			labels := templateLabels(root)
			if len(anc) == 2 { // the whole map
				if len(labels) == 0 {
					return nil, false, true
				}
				return copyValue(labels), true, true
			}
			v, ok := labels[name]
			if len(parent(anc)) > 0 || !ok {
				return nil, false, true
			}
			return v, true, true
		},
	},
	{
		Name:    "secretStringData",
		Paths:   []string{".data.*", ".data"},
		Depends: "stringData (written into data)",
		Eval: func(name string, anc []any) (any, bool, bool) {
			root, _ := first(anc).(map[string]any)
			sd, _ := root["stringData"].(map[string]any)
			if name == "data" {
				if len(sd) == 0 {
					return nil, false, true
				}
				out := map[string]any{}
				for k, v := range sd {
					s, _ := v.(string)
					out[k] = base64.StdEncoding.EncodeToString([]byte(s))
				}
				return out, true, true
			}
			v, ok := sd[name]
			if !ok {
				return nil, false, true
			}
			str, _ := v.(string)
			return base64.StdEncoding.EncodeToString([]byte(str)), true, true
		},
	},
	{
		Name:    "nodePodCIDR",
		Paths:   []string{".spec.podCIDR"},
		Depends: "podCIDRs (podCIDR defaults to the first)",
		Eval: func(_ string, anc []any) (any, bool, bool) {
			cidrs, _ := parent(anc)["podCIDRs"].([]any)
			if len(cidrs) == 0 {
				return nil, false, true
			}
			return cidrs[0], true, true
		},
	},
	{
		Name:    "nodeAllocatable",
		Paths:   []string{".status.allocatable"},
		Depends: "the capacity (allocatable defaults to it)",
		Eval: func(_ string, anc []any) (any, bool, bool) {
			capacity, _ := parent(anc)["capacity"].(map[string]any)
			if len(capacity) == 0 {
				return nil, false, true
			}
			return copyValue(capacity), true, true
		},
	},
	{
		Name:    "crdSingular",
		Paths:   []string{".spec.names.singular"},
		Depends: "the kind (lower-cased)",
		Eval:    fromNamesKind(strings.ToLower),
	},
	{
		Name:    "crdListKind",
		Paths:   []string{".spec.names.listKind"},
		Depends: "the kind (KindList)",
		Eval:    fromNamesKind(func(k string) string { return k + "List" }),
	},
	{
		Name:    "externalTrafficPolicy",
		Paths:   []string{".spec.externalTrafficPolicy"},
		Depends: "the service's type and externalIPs (Cluster when it is reachable from outside)",
		Eval: func(_ string, anc []any) (any, bool, bool) {
			spec := parent(anc)
			typ, _ := spec["type"].(string)
			if typ == "" {
				typ = "ClusterIP"
			}
			ips, _ := spec["externalIPs"].([]any)
			if typ == "LoadBalancer" || typ == "NodePort" || typ == "ClusterIP" && len(ips) > 0 {
				return "Cluster", true, true
			}
			return nil, false, true
		},
	},
}

const namespaceNameLabel = "kubernetes.io/metadata.name"

// fromNamesKind derives a CustomResourceDefinition name from its kind.
func fromNamesKind(f func(string) string) func(string, []any) (any, bool, bool) {
	return func(_ string, anc []any) (any, bool, bool) {
		kind, _ := parent(anc)["kind"].(string)
		if kind == "" {
			return nil, false, true
		}
		return f(kind), true, true
	}
}

func ruleByName(name string) *Rule {
	for i := range Rules {
		if Rules[i].Name == name {
			return &Rules[i]
		}
	}
	return nil
}

// Applies tells whether a rule may apply to a pattern path: the pattern
// ends with one of its Paths, at a field boundary.
func (r *Rule) Applies(pattern string) bool {
	for _, s := range r.Paths {
		if pattern == s || strings.HasSuffix(pattern, s) && (s[0] == '.' || pattern[len(pattern)-len(s)-1] == '.') {
			return true
		}
	}
	return false
}

func parent(anc []any) map[string]any {
	if len(anc) == 0 {
		return nil
	}
	m, _ := anc[len(anc)-1].(map[string]any)
	return m
}

func first(anc []any) any {
	if len(anc) == 0 {
		return nil
	}
	return anc[0]
}

func objectName(anc []any) string {
	root, _ := first(anc).(map[string]any)
	md, _ := root["metadata"].(map[string]any)
	n, _ := md["name"].(string)
	return n
}

func templateLabels(root map[string]any) map[string]any {
	spec, _ := root["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	md, _ := tmpl["metadata"].(map[string]any)
	l, _ := md["labels"].(map[string]any)
	return l
}

func isZero(v any) bool {
	switch t := v.(type) {
	case int64:
		return t == 0
	case float64:
		return t == 0
	case int:
		return t == 0
	case int32:
		return t == 0
	}
	return v == nil
}

// pullPolicy is the apiserver's default image pull policy: Always when
// the image reference names the tag latest or no tag and no digest,
// IfNotPresent otherwise, also when the reference does not parse.
func pullPolicy(image string) string {
	if tag, ok := imageTag(image); ok && tag == "latest" {
		return "Always"
	}
	return "IfNotPresent"
}

// The grammar of github.com/distribution/reference, which the apiserver
// parses image references with.
var (
	refNameComponent = `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
	refDomain        = `(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\[(?:[a-fA-F0-9:]+)\])(?::[0-9]+)?`
	refName          = `(?:` + refDomain + `/)?` + refNameComponent + `(?:/` + refNameComponent + `)*`
	// Compiled on first use: compiling at start cost every run 2 ms.
	referenceRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(` + refName + `)(?::([\w][\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}))?$`)
	})
	anchoredHexRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-f0-9]{64}$`) })
	digestHexLength = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}
)

// imageTag returns the tag ParseImageName gives an image reference
// ("latest" when it names neither tag nor digest); false when it does not
// parse.
func imageTag(image string) (string, bool) {
	if anchoredHexRE().MatchString(image) {
		return "", false
	}
	m := referenceRE().FindStringSubmatch(image)
	if m == nil || len(m[1]) > 255 {
		return "", false
	}
	// Docker Hub names are lower case; only a domain may use capitals.
	remote := m[1]
	if i := strings.IndexByte(remote, '/'); i >= 0 {
		if d := remote[:i]; strings.ContainsAny(d, ".:") || d == "localhost" || strings.ToLower(d) != d {
			remote = remote[i+1:]
		}
	}
	if strings.ToLower(remote) != remote {
		return "", false
	}
	if m[3] != "" {
		alg, hex, _ := strings.Cut(m[3], ":")
		if n, ok := digestHexLength[alg]; !ok || len(hex) != n || strings.ToLower(hex) != hex {
			return "", false
		}
	}
	switch {
	case m[2] != "":
		return m[2], true
	case m[3] != "":
		return "", true
	}
	return "latest", true
}

package cmd

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
)

// addCompletion keeps cobra's "completion bash|zsh|fish|powershell" command,
// with help that mentions kubectl's plugin completion.
func addCompletion(root *cobra.Command, _ *globalOptions) {
	root.CompletionOptions.DisableDefaultCmd = false
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Long += `

For "kubectl ssa <TAB>" (kubectl's plugin completion, kubectl 1.26+), put
the kubectl_complete-ssa script from this repository on your PATH next to
kubectl-ssa.`
		}
	}
}

// completeManagers completes manager names from the selected objects.
func completeManagers(g *globalOptions, sel *kube.Selection) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		objs, _, err := sel.Resolve(g.configFlags, args)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		seen := map[string]bool{}
		var out []string
		for _, o := range objs {
			for _, e := range o.GetManagedFields() {
				if !seen[e.Manager] && strings.HasPrefix(e.Manager, toComplete) {
					seen[e.Manager] = true
					out = append(out, e.Manager)
				}
			}
		}
		sort.Strings(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeResources completes "TYPE" from discovery and "TYPE NAME" or
// "TYPE/NAME" from the cluster.
func completeResources(g *globalOptions) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 && !strings.Contains(toComplete, "/") {
			return resourceTypes(g, toComplete), cobra.ShellCompDirectiveNoFileComp
		}
		typ := ""
		prefix := ""
		if len(args) > 0 {
			typ = args[0]
		} else {
			typ, _, _ = strings.Cut(toComplete, "/")
			prefix = typ + "/"
		}
		names := resourceNames(g, typ)
		var out []string
		for _, n := range names {
			if strings.HasPrefix(prefix+n, toComplete) {
				out = append(out, prefix+n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

func resourceTypes(g *globalOptions, prefix string) []string {
	dc, err := g.configFlags.ToDiscoveryClient()
	if err != nil {
		return nil
	}
	lists, _ := dc.ServerPreferredResources()
	seen := map[string]bool{}
	for _, l := range lists {
		gv, _ := schemaGroup(l.GroupVersion)
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !kube.HasVerb(r, "get") {
				continue
			}
			name := r.Name
			if gv != "" {
				name += "." + gv
			}
			if strings.HasPrefix(name, prefix) {
				seen[name] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func schemaGroup(gv string) (string, string) {
	if i := strings.Index(gv, "/"); i >= 0 {
		return gv[:i], gv[i+1:]
	}
	return "", gv
}

func resourceNames(g *globalOptions, typ string) []string {
	ns, _, err := g.configFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil
	}
	r := resource.NewBuilder(g.configFlags).Unstructured().NamespaceParam(ns).DefaultNamespace().
		ResourceTypeOrNameArgs(true, typ).Flatten().Do()
	infos, err := r.Infos()
	if err != nil {
		cobra.CompDebugln("listing "+typ+": "+err.Error(), true)
		return nil
	}
	var out []string
	for _, i := range infos {
		if u, ok := i.Object.(*unstructured.Unstructured); ok {
			out = append(out, u.GetName())
		}
	}
	sort.Strings(out)
	return out
}

package cmd

import (
	"context"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// binaryName is what the completion scripts complete: the plugin binary.
// The root command is "ssa" (kubectl ssa), a command no shell has.
const binaryName = "kubectl-ssa"

// addCompletion keeps cobra's "completion bash|zsh|fish|powershell" command,
// generating scripts for kubectl-ssa, with help that mentions kubectl's
// plugin completion; and completes the config flags every command has.
func addCompletion(root *cobra.Command, g *globalOptions) {
	root.CompletionOptions.DisableDefaultCmd = false
	// The scripts, and the help that says how to load them, are made
	// from the root command's name.
	use := root.Use
	root.Use = binaryName
	root.InitDefaultCompletionCmd()
	root.Use = use
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Long += `

For "kubectl ssa <TAB>" (kubectl's plugin completion, kubectl 1.26+), put
the kubectl_complete-ssa script from this repository on your PATH next to
kubectl-ssa.`
		for _, shell := range c.Commands() {
			generate := shell.RunE
			shell.RunE = func(cmd *cobra.Command, args []string) error {
				root.Use = binaryName
				defer func() { root.Use = use }()
				return generate(cmd, args)
			}
		}
	}
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return withPrefix(resourceNames(g, "namespaces"), toComplete), cobra.ShellCompDirectiveNoFileComp
	})
	_ = root.RegisterFlagCompletionFunc("context", func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		cfg, err := g.configFlags.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := make([]string, 0, len(cfg.Contexts))
		for n := range cfg.Contexts {
			names = append(names, n)
		}
		sort.Strings(names)
		return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	})
}

func withPrefix(names []string, prefix string) []string {
	out := []string{}
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// completeFields completes --field with the paths of the selected objects,
// owned or not, one element at a time: .spec.te<TAB> gives .spec.template,
// and the next TAB the fields below it.
func completeFields(g *globalOptions, sel *kube.Selection) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		const directive = cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		objs, _, err := sel.Resolve(cmd.Context(), g.configFlags, args)
		if err != nil {
			return nil, directive
		}
		typed := toComplete
		if typed != "" && typed[0] != '.' && typed[0] != '[' {
			typed = "." + typed // the leading dot is optional
		}
		seen := map[string]bool{}
		var out []string
		add := func(p pathlang.Path) {
			text := ""
			for k := range p {
				text += pathlang.ElementString(p[k])
				if len(text) > len(typed) || k == len(p)-1 {
					break
				}
			}
			if strings.HasPrefix(text, typed) && len(text) > len(typed) && !seen[text] {
				seen[text] = true
				out = append(out, toComplete+text[len(typed):])
			}
		}
		for _, o := range objs {
			r, err := ownership.Analyze(o, ownership.Options{})
			if err != nil {
				continue
			}
			for _, f := range r.Fields {
				add(f.Path)
			}
			for _, u := range r.Unowned {
				add(u)
			}
		}
		sort.Strings(out)
		return out, directive
	}
}

// completeManagers completes manager names from the selected objects.
func completeManagers(g *globalOptions, sel *kube.Selection) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		objs, _, err := sel.Resolve(cmd.Context(), g.configFlags, args)
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

// helmReleaseNames completes --helm-release: the releases of the
// namespace, none when they can't be listed.
func helmReleaseNames(ctx context.Context, o *applyInput) []string {
	storage, err := kube.HelmStorageFor(os.Getenv("HELM_DRIVER"))
	if err != nil {
		return nil
	}
	c, err := o.kubeCluster()
	if err != nil {
		return nil
	}
	names, err := c.HelmReleaseNames(ctx, storage, c.Namespace)
	if err != nil {
		cobra.CompDebugln("listing helm releases: "+err.Error(), true)
		return nil
	}
	return names
}

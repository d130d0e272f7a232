package kube

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// Contexts lists the kubeconfig's contexts, sorted, and the current one
// (--context when given).
func Contexts(f *genericclioptions.ConfigFlags) (names []string, current string, err error) {
	raw, err := f.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	for name := range raw.Contexts {
		names = append(names, name)
	}
	sort.Strings(names)
	current = raw.CurrentContext
	if f.Context != nil && *f.Context != "" {
		current = *f.Context
	}
	return names, current, nil
}

// ForContext copies kubectl's flags with another --context: the same
// kubeconfig, user overrides and namespace, another cluster.
func ForContext(f *genericclioptions.ConfigFlags, name string) (*genericclioptions.ConfigFlags, error) {
	names, _, err := Contexts(f)
	if err != nil {
		return nil, err
	}
	found := false
	for _, n := range names {
		found = found || n == name
	}
	if !found {
		return nil, fmt.Errorf("context %q is not in the kubeconfig: list them with kubectl config get-contexts", name)
	}
	if name == "" {
		return nil, errors.New("an empty context name")
	}
	c := genericclioptions.NewConfigFlags(true)
	c.CacheDir, c.KubeConfig, c.ClusterName, c.AuthInfoName = f.CacheDir, f.KubeConfig, f.ClusterName, f.AuthInfoName
	c.Namespace, c.APIServer, c.TLSServerName, c.Insecure = f.Namespace, f.APIServer, f.TLSServerName, f.Insecure
	c.CertFile, c.KeyFile, c.CAFile, c.BearerToken = f.CertFile, f.KeyFile, f.CAFile, f.BearerToken
	c.Impersonate, c.ImpersonateUID, c.ImpersonateGroup, c.ImpersonateUserExtra = f.Impersonate, f.ImpersonateUID, f.ImpersonateGroup, f.ImpersonateUserExtra
	c.Username, c.Password, c.Timeout, c.DisableCompression, c.ProxyURL = f.Username, f.Password, f.Timeout, f.DisableCompression, f.ProxyURL
	c.WrapConfigFn = f.WrapConfigFn
	c.Context = &name
	return c, nil
}

// Target is one cluster of a command that reaches several.
type Target struct {
	// Name is its context.
	Name string
	// Flags reach it.
	Flags *genericclioptions.ConfigFlags
	// CommandFlags are the connection flags of the commands suggested for
	// it: the user's own, with its --context.
	CommandFlags []string
}

// Targets are the clusters of --context a,b (a list of contexts), of all
// the kubeconfig's contexts (all), or the one cluster of f. commandFlags
// are the user's connection flags as suggested commands repeat them.
func Targets(f *genericclioptions.ConfigFlags, all bool, commandFlags []string) ([]Target, error) {
	names, current, err := Contexts(f)
	if err != nil {
		return nil, err
	}
	var chosen []string
	switch {
	case all:
		if len(names) == 0 {
			return nil, errors.New("--all-contexts: the kubeconfig has no contexts")
		}
		chosen = names
	case strings.Contains(current, ","):
		for _, n := range strings.Split(current, ",") {
			if n = strings.TrimSpace(n); n != "" {
				chosen = append(chosen, n)
			}
		}
	default:
		return []Target{{Name: current, Flags: f, CommandFlags: commandFlags}}, nil
	}
	var base []string
	for _, fl := range commandFlags {
		if !strings.HasPrefix(fl, "--context=") {
			base = append(base, fl)
		}
	}
	out := make([]Target, 0, len(chosen))
	for _, n := range chosen {
		flags, err := ForContext(f, n)
		if err != nil {
			return nil, err
		}
		out = append(out, Target{Name: n, Flags: flags, CommandFlags: append(append([]string{}, base...), "--context="+n)})
	}
	return out, nil
}

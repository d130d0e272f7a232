package kube

import (
	"errors"
	"fmt"
	"sort"

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

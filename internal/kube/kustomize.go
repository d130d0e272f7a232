package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// checkKustomization refuses a kustomization, or one it builds on
// locally, that names remote resources (a URL, a Git repository):
// kustomize fetches them with its own client, which has neither a bound
// on what it reads nor a timeout. What can't be read is kustomize's to
// report.
func checkKustomization(dir string) error {
	if isRemote(dir) {
		return fmt.Errorf("-k %s: a remote kustomization is not read (no bound on its size or time): clone or download it and give its directory", dir)
	}
	return checkKustomizationDir(dir, map[string]bool{})
}

func checkKustomizationDir(dir string, seen map[string]bool) error {
	if seen[dir] {
		return nil
	}
	seen[dir] = true
	var k struct {
		Resources  []string `json:"resources"`
		Components []string `json:"components"`
		Bases      []string `json:"bases"`
	}
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		data, err := os.ReadFile(filepath.Join(dir, name)) //nolint:gosec // the user's own kustomization
		if err != nil {
			continue
		}
		if len(data) > MaxInputBytes || yaml.Unmarshal(data, &k) != nil {
			return nil //nolint:nilerr // kustomize reports it
		}
		break
	}
	for _, r := range append(append(k.Resources, k.Components...), k.Bases...) {
		p := filepath.Join(dir, r)
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			if err := checkKustomizationDir(p, seen); err != nil {
				return err
			}
		case err != nil && isRemote(r):
			return fmt.Errorf("-k: the kustomization in %s names the remote resource %s, which is not read (no bound on its size or time): download it and name the local copy", dir, r)
		}
	}
	return nil
}

// isRemote tells whether a kustomization entry names what kustomize
// fetches: a URL, or a Git repository (git@host:..., host/org/repo?ref=).
func isRemote(r string) bool {
	return strings.Contains(r, "://") || strings.HasPrefix(r, "git@") || strings.Contains(r, "?ref=") ||
		strings.HasPrefix(r, "github.com/") || strings.HasPrefix(r, "gitlab.com/") || strings.HasPrefix(r, "bitbucket.org/")
}

package cmd

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The cluster is set up while the input is read, but a bad manifest is
// still the error, at once: an apiserver that never answers is not waited
// for.
func TestBadManifestBeforeASilentServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	go func() {
		var held []net.Conn // accepted, never answered
		for {
			c, err := l.Accept()
			if err != nil {
				for _, c := range held {
					_ = c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	cfg := writeFile(t, "config", "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://"+l.Addr().String()+"', insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n")
	bad := writeFile(t, "bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [oops]}\n")
	for _, command := range []string{"explain-conflict", "diff"} {
		done := make(chan result, 1)
		go func() { done <- run(t, command, "-f", bad, "--kubeconfig", cfg) }()
		select {
		case r := <-done:
			if r.code == CodeOK || !strings.Contains(r.err, "bad.yaml") {
				t.Errorf("%s: exit %d, stderr %q: want the manifest's error", command, r.code, r.err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: still waiting for the server after 30s", command)
		}
	}
}

// Credentials that may ask the user (an exec plugin that may prompt) are
// not asked for before the input is read: a bad manifest never runs the
// plugin.
func TestBadManifestBeforeAnInteractiveCredentialPlugin(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "plugin-ran")
	plugin := writeFile(t, "plugin.sh", "#!/bin/sh\ntouch '"+marker+"'\nexit 1\n")
	if err := os.Chmod(plugin, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, "config", `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: '`+plugin+`', interactiveMode: IfAvailable}}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`)
	bad := writeFile(t, "bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [oops]}\n")
	for _, command := range []string{"explain-conflict", "diff"} {
		r := run(t, command, "-f", bad, "--kubeconfig", cfg)
		if r.code == CodeOK || !strings.Contains(r.err, "bad.yaml") {
			t.Errorf("%s: exit %d, stderr %q: want the manifest's error", command, r.code, r.err)
		}
	}
	time.Sleep(100 * time.Millisecond) // a plugin started in the background would have run by now
	if _, err := os.Stat(marker); err == nil {
		t.Error("the credential plugin ran for a bad manifest")
	}
}

package kube

import (
	"net/http"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// OfflineHost is the host of an offline cluster's clients: a name that
// resolves nowhere, so a request that escaped the transport would fail.
const OfflineHost = "https://snapshot.invalid"

// Offline makes the clients of a cluster whose every request rt answers
// (a snapshot), in namespace ns (enforce: -n was given). Nothing is
// dialled.
func Offline(rt http.RoundTripper, ns string, enforce bool) (*Cluster, error) {
	cfg := &rest.Config{Host: OfflineHost, Transport: rt, QPS: -1, WarningHandler: rest.NoWarnings{}}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Config: cfg, Namespace: ns, Enforce: enforce}
	c.Discovery = memory.NewMemCacheClient(disc)
	c.Mapper = restmapper.NewDeferredDiscoveryRESTMapper(c.Discovery)
	if c.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if c.Metadata, err = metadata.NewForConfig(cfg); err != nil {
		return nil, err
	}
	return c, nil
}

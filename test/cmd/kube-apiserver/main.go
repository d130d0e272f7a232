// Command kube-apiserver is the test bed of kubectl-ssa: a real Kubernetes API
// server (k8s.io/kubernetes' own apiserver code) with an embedded etcd, and a
// real kube-controller-manager run as a second process of this same binary.
//
// The binary must be called kube-apiserver: the apiserver's own writes record
// the executable's name as their field manager, exactly as in a real cluster.
// Started as kube-controller-manager (argv[0]) it runs the controller manager.
//
//	kube-apiserver --testbed-dir DIR [--controllers LIST] [--no-controller-manager]
//
// It generates a CA, serving and client certificates and a service-account
// key in DIR, starts etcd and the apiserver on loopback ports, starts the
// controller manager, and when everything is ready writes DIR/kubeconfig and
// prints "ready KUBECONFIG=DIR/kubeconfig". SIGTERM or SIGINT stops it all.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/cli"
	apiserverapp "k8s.io/kubernetes/cmd/kube-apiserver/app"
	kcmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

const defaultControllers = "deployment-controller,replicaset-controller,horizontal-pod-autoscaler-controller,serviceaccount-controller,namespace-controller"

func main() {
	if filepath.Base(os.Args[0]) == "kube-controller-manager" {
		cmd := kcmapp.NewControllerManagerCommand()
		cmd.SetArgs(os.Args[1:])
		os.Exit(cli.Run(cmd))
	}
	// The controller manager child is killed when the thread that started it
	// dies (Pdeathsig); keep that thread for the life of the process.
	runtime.LockOSThread()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "testbed: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	fs := flag.NewFlagSet("kube-apiserver", flag.ContinueOnError)
	dir := fs.String("testbed-dir", "", "directory for certificates, etcd data and the kubeconfig (required)")
	controllers := fs.String("controllers", defaultControllers, "controllers the kube-controller-manager runs")
	noKCM := fs.Bool("no-controller-manager", false, "do not start kube-controller-manager")
	hpaSync := fs.Duration("hpa-sync-period", 2*time.Second, "horizontal-pod-autoscaler sync period")
	keep := fs.Bool("keep-data", false, "restart the cluster DIR holds: reuse its certificates, etcd data and ports (a first start with it starts afresh)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("--testbed-dir is required")
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	*dir = abs
	restart, err := prepareDir(*dir, *keep)
	if err != nil {
		return err
	}
	ports, pki, err := portsAndPKI(*dir, restart)
	if err != nil {
		return err
	}
	etcdClient, etcdPeer, apiPort, kcmPort := ports[0], ports[1], ports[2], ports[3]

	etcd, err := startEtcd(filepath.Join(*dir, "etcd"), etcdClient, etcdPeer)
	if err != nil {
		return fmt.Errorf("starting etcd: %w", err)
	}
	defer etcd.Close()

	server := fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	kubeconfig := filepath.Join(*dir, "kubeconfig")
	staging := filepath.Join(*dir, "admin.kubeconfig")
	if err := writeKubeconfig(staging, server, pki); err != nil {
		return err
	}

	args := apiserverArgs(pki.dir, etcdClient, apiPort)
	apiCmd := apiserverapp.NewAPIServerCommand()
	apiCmd.SetArgs(args)
	apiDone := make(chan error, 1)
	go func() { apiDone <- apiCmd.Execute() }()

	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := waitReady(ctx, staging, apiDone); err != nil {
		return err
	}

	if !*noKCM {
		stop, err := startControllerManager(ctx, staging, *controllers, *hpaSync, kcmPort)
		if err != nil {
			return err
		}
		defer stop()
	}

	if err := publish(staging, kubeconfig); err != nil {
		return err
	}
	fmt.Printf("ready KUBECONFIG=%s\n", kubeconfig)

	select {
	case s := <-sig:
		fmt.Fprintf(os.Stderr, "testbed: %s, stopping\n", s)
		// The apiserver's own signal handler has seen the signal too and
		// shuts down gracefully; give it a bounded time.
		select {
		case err := <-apiDone:
			if err != nil {
				fmt.Fprintln(os.Stderr, "testbed: kube-apiserver: "+err.Error())
			}
		case <-time.After(15 * time.Second):
		}
		return nil
	case err := <-apiDone:
		if err == nil {
			err = errors.New("kube-apiserver exited")
		}
		return err
	}
}

// apiserverArgs are the flags of the test bed's kube-apiserver.
func apiserverArgs(c string, etcdClient, apiPort int) []string {
	return []string{
		"--etcd-servers=" + fmt.Sprintf("http://127.0.0.1:%d", etcdClient),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(apiPort),
		"--cert-dir=" + c,
		"--tls-cert-file=" + filepath.Join(c, "serving.crt"),
		"--tls-private-key-file=" + filepath.Join(c, "serving.key"),
		"--client-ca-file=" + filepath.Join(c, "ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + filepath.Join(c, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(c, "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		"--enable-priority-and-fairness=false",
		"--endpoint-reconciler-type=none",
		"--profiling=false",
		"--v=0",
	}
}

// startControllerManager starts the test bed's kube-controller-manager
// (this executable, under that name) and waits until it made the default
// ServiceAccount; stop stops it.
func startControllerManager(ctx context.Context, staging, controllers string, hpaSync time.Duration, kcmPort int) (stop func(), err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	kcm := &exec.Cmd{
		Path: self,
		Args: []string{"kube-controller-manager",
			"--kubeconfig=" + staging,
			"--controllers=" + controllers,
			"--leader-elect=false",
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(kcmPort),
			"--use-service-account-credentials=false",
			"--horizontal-pod-autoscaler-sync-period=" + hpaSync.String(),
			"--authentication-skip-lookup=true",
			"--v=0",
		},
		Stdout:      os.Stderr,
		Stderr:      os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	if err := kcm.Start(); err != nil {
		return nil, fmt.Errorf("starting kube-controller-manager: %w", err)
	}
	stop = func() {
		_ = kcm.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = kcm.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = kcm.Process.Kill()
		}
	}
	if err := waitDefaultServiceAccount(ctx, staging); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// prepareDir readies the test bed's directory: kept for a restart (keep,
// and a cluster was there), else emptied of a former cluster.
func prepareDir(dir string, keep bool) (restart bool, err error) {
	restart = keep && fileExists(filepath.Join(dir, "certs", "ca.crt")) && fileExists(filepath.Join(dir, "ports"))
	if !restart {
		for _, sub := range []string{"etcd", "certs", "ports"} {
			_ = os.RemoveAll(filepath.Join(dir, sub))
		}
	}
	_ = os.Remove(filepath.Join(dir, "kubeconfig"))
	return restart, os.MkdirAll(filepath.Join(dir, "certs"), 0o700)
}

// portsAndPKI are the cluster's ports and certificates: those dir holds
// on a restart, else new ones, written there.
func portsAndPKI(dir string, restart bool) ([]int, *pki, error) {
	if restart {
		// The same cluster at the same address: what a client sees when
		// its apiserver restarts.
		ports, err := readPorts(filepath.Join(dir, "ports"))
		if err != nil {
			return nil, nil, err
		}
		pki, err := readPKI(filepath.Join(dir, "certs"))
		return ports, pki, err
	}
	ports, err := freePorts(4)
	if err != nil {
		return nil, nil, err
	}
	if err := writePorts(filepath.Join(dir, "ports"), ports); err != nil {
		return nil, nil, err
	}
	pki, err := writePKI(filepath.Join(dir, "certs"))
	if err != nil {
		return nil, nil, fmt.Errorf("generating certificates: %w", err)
	}
	return ports, pki, nil
}

// publish puts the kubeconfig at its place in one step, once the cluster
// is ready: who waits for the file finds it whole.
func publish(staging, kubeconfig string) error {
	data, err := os.ReadFile(staging)
	if err != nil {
		return err
	}
	if err := os.WriteFile(kubeconfig+".tmp", data, 0o600); err != nil {
		return err
	}
	return os.Rename(kubeconfig+".tmp", kubeconfig)
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func startEtcd(dir string, clientPort, peerPort int) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.Name = "testbed"
	cu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", clientPort))
	pu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", peerPort))
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "error"
	cfg.UnsafeNoFsync = true // a throwaway test store: speed over durability
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, errors.New("etcd did not become ready in 60s")
	}
}

type pki struct {
	dir                string
	caPEM              []byte
	clientCrt, clientK []byte
}

func writePKI(dir string) (*pki, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now().Add(-time.Hour)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubectl-ssa-testbed-ca"},
		NotBefore:             now,
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, tmpl *x509.Certificate) (crt, key []byte, err error) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = now, now.Add(10*365*24*time.Hour)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			return nil, nil, err
		}
		kd, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return nil, nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), nil
	}
	servingCrt, servingKey, err := issue(2, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
	})
	if err != nil {
		return nil, err
	}
	clientCrt, clientKey, err := issue(3, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "testbed-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	saDER, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return nil, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	files := map[string][]byte{
		"ca.crt":      caPEM,
		"serving.crt": servingCrt,
		"serving.key": servingKey,
		"admin.crt":   clientCrt,
		"admin.key":   clientKey,
		"sa.key":      pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: saDER}),
		"sa.pub":      pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub}),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	return &pki{dir: dir, caPEM: caPEM, clientCrt: clientCrt, clientK: clientKey}, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func writePorts(path string, ports []int) error {
	words := make([]string, len(ports))
	for i, p := range ports {
		words[i] = strconv.Itoa(p)
	}
	return os.WriteFile(path, []byte(strings.Join(words, " ")+"\n"), 0o600)
}

func readPorts(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ports []int
	for _, w := range strings.Fields(string(b)) {
		p, err := strconv.Atoi(w)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		ports = append(ports, p)
	}
	if len(ports) != 4 {
		return nil, fmt.Errorf("%s: want 4 ports, got %d", path, len(ports))
	}
	return ports, nil
}

// readPKI reads what writePKI wrote, for a restart.
func readPKI(dir string) (*pki, error) {
	p := &pki{dir: dir}
	for name, into := range map[string]*[]byte{"ca.crt": &p.caPEM, "admin.crt": &p.clientCrt, "admin.key": &p.clientK} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		*into = b
	}
	return p, nil
}

func writeKubeconfig(path, server string, p *pki) error {
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: testbed
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: testbed-admin
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: testbed
  context:
    cluster: testbed
    user: testbed-admin
    namespace: default
current-context: testbed
`, server, b64(p.caPEM), b64(p.clientCrt), b64(p.clientK))
	return os.WriteFile(path, []byte(cfg), 0o600)
}

func waitReady(ctx context.Context, kubeconfig string, apiDone <-chan error) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && strings.TrimSpace(string(body)) == "ok" {
			return nil
		}
		select {
		case err := <-apiDone:
			return fmt.Errorf("kube-apiserver exited before it was ready: %w", err)
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready: %w", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitDefaultServiceAccount waits until the serviceaccount controller works:
// without it the ServiceAccount admission plugin refuses every pod.
func waitDefaultServiceAccount(ctx context.Context, kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1GetOptions)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-controller-manager did not create the default service account: %w", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

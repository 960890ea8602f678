package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// env returns a getenv over m.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestRedisFlags(t *testing.T) {
	for _, c := range []struct {
		name    string
		args    []string
		env     map[string]string
		want    rdb.ClientConfig
		wantErr string
	}{
		{name: "embedded by default"},
		{name: "url from the environment", env: map[string]string{"REDIS_URL": "redis://h:1/2"},
			want: rdb.ClientConfig{URL: "redis://h:1/2"}},
		{name: "cluster seeds", args: []string{"-redis-cluster", "a:1, b:2,,c:3"},
			want: rdb.ClientConfig{ClusterAddrs: []string{"a:1", "b:2", "c:3"}}},
		{name: "cluster from the environment, flag wins over env",
			env:  map[string]string{"REDIS_CLUSTER_ADDRS": "a:1", "REDIS_PASSWORD": "envpass"},
			args: []string{"-redis-password", "flagpass"},
			want: rdb.ClientConfig{ClusterAddrs: []string{"a:1"}, Password: "flagpass"}},
		{name: "sentinel", env: map[string]string{"REDIS_SENTINEL_ADDRS": "s1:26379,s2:26379", "REDIS_SENTINEL_MASTER": "m",
			"REDIS_SENTINEL_PASSWORD": "sp", "REDIS_USERNAME": "agora", "REDIS_PASSWORD": "p"},
			want: rdb.ClientConfig{SentinelAddrs: []string{"s1:26379", "s2:26379"}, SentinelMaster: "m",
				SentinelPassword: "sp", Username: "agora", Password: "p"}},
		{name: "tls", args: []string{"-redis", "h:6380", "-redis-tls", "-redis-tls-ca", "ca.pem", "-redis-tls-server-name", "redis.internal"},
			env:  map[string]string{"REDIS_TLS_INSECURE": "true"},
			want: rdb.ClientConfig{URL: "h:6380", TLS: true, TLSCAFile: "ca.pem", TLSServerName: "redis.internal", TLSInsecure: true}},
		{name: "two deployments", args: []string{"-redis", "h:1", "-redis-cluster", "a:1"}, wantErr: "one Redis deployment"},
		{name: "sentinel without master", args: []string{"-redis-sentinel", "s:1"}, wantErr: "name of the master"},
		{name: "master without sentinel", args: []string{"-redis-master", "m"}, wantErr: "needs sentinel addresses"},
		{name: "cert without key", args: []string{"-redis", "h:1", "-redis-tls-cert", "c.pem"}, wantErr: "both the certificate and the key"},
		{name: "url as a cluster seed", args: []string{"-redis-cluster", "redis://a:1"}, wantErr: "want host:port"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, _, err := parseFlags(c.args, env(c.env), io.Discard)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.redis, c.want) {
				t.Fatalf("config = %+v\nwant     %+v", cfg.redis, c.want)
			}
		})
	}
}

func TestWaitFlags(t *testing.T) {
	cfg, _, err := parseFlags([]string{"-redis-wait-replicas", "1"}, env(map[string]string{"REDIS_WAIT_TIMEOUT": "250ms"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.waitReplicas != 1 || cfg.waitTimeout != 250*time.Millisecond {
		t.Fatalf("wait = %d, %s", cfg.waitReplicas, cfg.waitTimeout)
	}
}

// TestHelpListsRedisFlags: -h documents every Redis flag with its environment variable.
func TestHelpListsRedisFlags(t *testing.T) {
	var out bytes.Buffer
	_, _, err := parseFlags([]string{"-h"}, env(nil), &out)
	if err == nil {
		t.Fatal("-h did not stop")
	}
	for _, f := range []string{
		"-redis ", "REDIS_URL", "-redis-cluster", "REDIS_CLUSTER_ADDRS", "-redis-sentinel", "REDIS_SENTINEL_ADDRS",
		"-redis-master", "REDIS_SENTINEL_MASTER", "-redis-username", "REDIS_USERNAME", "-redis-password", "REDIS_PASSWORD",
		"-redis-sentinel-username", "REDIS_SENTINEL_USERNAME", "-redis-sentinel-password", "REDIS_SENTINEL_PASSWORD",
		"-redis-tls", "REDIS_TLS", "-redis-tls-ca", "REDIS_TLS_CA", "-redis-tls-cert", "REDIS_TLS_CERT",
		"-redis-tls-key", "REDIS_TLS_KEY", "-redis-tls-server-name", "REDIS_TLS_SERVER_NAME",
		"-redis-tls-insecure", "REDIS_TLS_INSECURE", "-redis-wait-replicas", "REDIS_WAIT_REPLICAS",
		"-redis-wait-timeout", "REDIS_WAIT_TIMEOUT",
	} {
		if !strings.Contains(out.String(), f) {
			t.Errorf("-h does not mention %q", f)
		}
	}
}

// serveUntilReady runs the server with args and returns its address; it stops with the test.
func serveUntilReady(t *testing.T, args []string, getenv func(string) string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- runWith(ctx, append([]string{"-addr", "127.0.0.1:0", "-metrics-addr", "off"}, args...), getenv, io.Discard, io.Discard,
			func(a string) { ready <- a })
	}()
	stopped := false // runWith has returned and done is drained
	t.Cleanup(func() {
		cancel()
		if stopped {
			return
		}
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	select {
	case a := <-ready:
		return a
	case err := <-done:
		stopped = true
		t.Fatalf("server stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("server not ready")
	}
	return ""
}

// signUpOver signs a user up through the HTTP API, proving that writes reach Redis.
func signUpOver(t *testing.T, addr, name string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"query":     `mutation($n:String!){signUp(name:$n,password:"password1"){token}}`,
		"variables": map[string]any{"n": name},
	})
	res, err := http.Post("http://"+addr+"/query", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.Contains(string(b), `"token"`) || strings.Contains(string(b), `"errors"`) {
		t.Fatalf("signUp: %d %s", res.StatusCode, b)
	}
	r, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 200 {
		t.Fatalf("/readyz: %d", r.StatusCode)
	}
}

// TestServeOnCluster runs the server on the test cluster, configured through the environment as
// a deployment would be, and then the rebuild command.
func TestServeOnCluster(t *testing.T) {
	addrs := storetest.ClusterAddrs(t)
	prefix := storetest.Prefix()
	getenv := env(map[string]string{"REDIS_CLUSTER_ADDRS": strings.Join(addrs, ","), "AGORA_PREFIX": prefix})
	addr := serveUntilReady(t, nil, getenv)
	for i := range 5 {
		signUpOver(t, addr, fmt.Sprintf("clusteruser%d", i))
	}

	// rebuild re-derives the rankings from the posts spread over the masters.
	cc := storetest.NewClusterClient(t, addrs)
	st, err := store.New(context.Background(), cc, store.Options{Prefix: prefix, Password: storetest.FastPasswords, WriteLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, err := st.SignUp(ctx, "rebuilder", "password1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := st.CreatePost(ctx, sess.User.Key(), store.NewPost{Title: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	hot, _, _, _ := rankingKeys(prefix)
	if err := cc.Del(ctx, hot).Err(); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"rebuild"}, getenv, io.Discard, io.Discard); err != nil {
		t.Fatalf("agora rebuild: %v", err)
	}
	if n, err := cc.ZCard(ctx, hot).Result(); err != nil || n != 20 {
		t.Fatalf("HOT ranking after rebuild holds %d posts, %v; want 20", n, err)
	}
}

// rankingKeys names the site's rankings under prefix, as store/keys.go builds them.
func rankingKeys(prefix string) (hot, new, top, ver string) {
	tag := prefix + "{r:all}"
	return tag + ":hot", tag + ":new", tag + ":top", tag + ":ver"
}

// TestServeOnSentinel runs the server on the Sentinel deployment named by REDIS_SENTINEL_ADDRS
// and REDIS_SENTINEL_MASTER (CI sets them; store's failover test covers failing over).
func TestServeOnSentinel(t *testing.T) {
	addrs, master := os.Getenv("REDIS_SENTINEL_ADDRS"), os.Getenv("REDIS_SENTINEL_MASTER")
	if addrs == "" {
		t.Skip("no Sentinel deployment: set REDIS_SENTINEL_ADDRS and REDIS_SENTINEL_MASTER (scripts/redis-sentinel.sh starts one)")
	}
	addr := serveUntilReady(t, []string{"-redis-sentinel", addrs, "-redis-master", master, "-prefix", storetest.Prefix(),
		"-redis-wait-replicas", "1", "-redis-wait-timeout", "5s", "-redis-timeout", "10s"}, env(nil))
	signUpOver(t, addr, "sentineluser")
}

// TestServeOverTLS starts a redis-server that speaks only TLS and requires a password, and runs
// the server on it with each way of trusting its certificate.
func TestServeOverTLS(t *testing.T) {
	storetest.SkipUnless(t, "redis")
	dir := t.TempDir()
	ca, caKey := writeCert(t, dir, "ca", nil, nil)
	writeCert(t, dir, "server", ca, caKey)
	port, err := storetest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("REQUIRE_REAL_REDIS") == "1" {
			t.Fatal("REQUIRE_REAL_REDIS=1 but redis-server is not on PATH")
		}
		t.Skip("redis-server is not on PATH")
	}
	var log bytes.Buffer
	cmd := exec.Command(bin, "--port", "0", "--tls-port", fmt.Sprint(port), "--bind", "127.0.0.1",
		"--tls-cert-file", filepath.Join(dir, "server.pem"), "--tls-key-file", filepath.Join(dir, "server.key"),
		"--tls-ca-cert-file", filepath.Join(dir, "ca.pem"), "--tls-auth-clients", "no",
		"--requirepass", "s3cret", "--save", "", "--appendonly", "no")
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	hostport := fmt.Sprintf("127.0.0.1:%d", port)
	probe := rdb.NewPlainClient(&rdb.Options{Addr: hostport, Password: "s3cret", TLSConfig: &tls.Config{InsecureSkipVerify: true}})
	defer probe.Close()
	for i := 0; probe.Ping(context.Background()).Err() != nil; i++ {
		select {
		case <-exited:
			if strings.Contains(log.String(), "TLS") {
				t.Skipf("redis-server without TLS support: %s", log.String())
			}
			t.Fatalf("redis-server exited: %s", log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if i > 200 {
			t.Fatalf("TLS redis-server does not answer: %s", log.String())
		}
	}

	ctx := context.Background()
	caFile := filepath.Join(dir, "ca.pem")
	for _, c := range []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
	}{
		{name: "rediss url and CA", args: []string{"-redis", "rediss://:s3cret@" + hostport, "-redis-tls-ca", caFile}},
		{name: "flags", args: []string{"-redis", hostport, "-redis-tls", "-redis-tls-ca", caFile},
			env: map[string]string{"REDIS_PASSWORD": "s3cret"}},
		{name: "insecure", args: []string{"-redis", hostport, "-redis-tls", "-redis-tls-insecure", "-redis-password", "s3cret"}},
		{name: "untrusted certificate", args: []string{"-redis", hostport, "-redis-tls", "-redis-password", "s3cret"},
			wantErr: "certificate"},
		{name: "wrong password", args: []string{"-redis", hostport, "-redis-tls", "-redis-tls-ca", caFile, "-redis-password", "nope"},
			wantErr: "authentication failed"},
		{name: "no TLS", args: []string{"-redis", hostport, "-redis-password", "s3cret"}, wantErr: "a TLS server reached without TLS"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string{"-prefix", storetest.Prefix()}, c.args...), "rebuild")
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			err := run(cctx, args, env(c.env), io.Discard, io.Discard)
			if c.wantErr == "" && err != nil {
				t.Fatalf("agora rebuild: %v", err)
			}
			if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}

// writeCert writes name.pem and name.key into dir: a CA when parent is nil, else a certificate
// for 127.0.0.1 signed by parent.
func writeCert(t *testing.T, dir, name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "agora test " + name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	signer, signerKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage = x509.KeyUsageCertSign
	} else {
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		signer, signerKey = parent, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(file, typ string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, file), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(name+".pem", "CERTIFICATE", der)
	write(name+".key", "EC PRIVATE KEY", keyDER)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

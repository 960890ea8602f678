package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/jobs"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// started is a run() serving in the background.
type started struct {
	url  string
	out  *syncBuffer
	stop func() error
}

// syncBuffer is a bytes.Buffer safe for the server's logger and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs the program with env on a free port and waits until it listens.
func start(t *testing.T, env map[string]string, args ...string) *started {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	getenv := func(k string) string { return env[k] }
	go func() {
		// No metrics listener unless asked: the default port would be shared by every test.
		done <- runWith(ctx, append([]string{"-addr", "127.0.0.1:0", "-metrics-addr", "off"}, args...), getenv, out, out, func(addr string) { ready <- addr })
	}()
	var s *started
	select {
	case addr := <-ready:
		s = &started{url: "http://" + addr, out: out}
	case err := <-done:
		cancel()
		t.Fatalf("run ended before listening: %v\n%s", err, out)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatalf("run did not start\n%s", out)
	}
	var once sync.Once
	var runErr error
	s.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(15 * time.Second):
				runErr = errors.New("run did not return after cancel")
			}
		})
		return runErr
	}
	t.Cleanup(func() { _ = s.stop() })
	return s
}

func (s *started) post(t *testing.T, token, query string) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequest(http.MethodPost, s.url+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out["errors"] != nil {
		t.Fatalf("errors: %v", out["errors"])
	}
	return out["data"].(map[string]any)
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestRunServesTheAPI(t *testing.T) {
	for name, env := range map[string]func(t *testing.T) map[string]string{
		"embedded": func(*testing.T) map[string]string { return map[string]string{} },
		"redis": func(t *testing.T) map[string]string {
			return map[string]string{"REDIS_URL": "redis://" + storetest.RealServer(t).Addr, "AGORA_PREFIX": storetest.Prefix()}
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := start(t, env(t))
			if name == "embedded" && !strings.Contains(s.out.String(), "embedded in-memory Redis") {
				t.Errorf("the log does not say data lives in memory:\n%s", s.out)
			}
			for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/": 200} {
				if code, body := get(t, s.url+path); code != want {
					t.Errorf("GET %s = %d %s", path, code, body)
				}
			}
			if _, body := get(t, s.url+"/"); !strings.Contains(strings.ToLower(body), "graphiql") {
				t.Errorf("GET / is not the GraphiQL page")
			}
			d := s.post(t, "", `mutation { signUp(name: "erin", password: "password1") { token } }`)
			token := d["signUp"].(map[string]any)["token"].(string)
			s.post(t, token, `mutation { createPost(input: {title: "over real HTTP"}) { id } }`)
			d = s.post(t, "", `{ posts { totalCount edges { node { title author { name } } } } }`)
			if n := d["posts"].(map[string]any)["totalCount"].(float64); n != 1 {
				t.Fatalf("totalCount %v", n)
			}
			if err := s.stop(); err != nil {
				t.Fatalf("graceful stop: %v", err)
			}
			if !strings.Contains(s.out.String(), "shutting down") {
				t.Errorf("no shutdown in the log:\n%s", s.out)
			}
		})
	}
}

// TestReadyzFollowsRedis stops the Redis under a running server: /healthz stays 200 and /readyz
// turns 503.
func TestReadyzFollowsRedis(t *testing.T) {
	storetest.RealServer(t) // skip (or fail under REQUIRE_REAL_REDIS) like the other real-redis tests
	own, err := storetest.StartServer()
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, map[string]string{"REDIS_URL": "redis://" + own.Addr})
	if code, _ := get(t, s.url+"/readyz"); code != 200 {
		t.Fatalf("readyz %d with redis up", code)
	}
	own.Stop()
	if code, _ := get(t, s.url+"/readyz"); code != 503 {
		t.Fatalf("readyz %d with redis down", code)
	}
	if code, _ := get(t, s.url+"/healthz"); code != 200 {
		t.Fatalf("healthz %d with redis down", code)
	}
}

func TestFlags(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-h"}, func(string) string { return "" }, &out, &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	for _, want := range []string{"-addr", "ADDR", "-redis", "REDIS_URL", "AGORA_VOTING_WINDOW", "AGORA_HOT_K", "AGORA_MAX_DEPTH", "rebuild", "AGORA_RESPONSE_CACHE", "migrate", "--dry-run", "-allow-eviction", "AGORA_ALLOW_EVICTION", "-require-email", "AGORA_REQUIRE_EMAIL", "-event-log-length", "AGORA_EVENT_LOG_AGE", "-feed-max-pulled", "AGORA_FEED_MAX_PULLED"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-h does not mention %s", want)
		}
	}
	// Environment variables set defaults; flags override them.
	cfg, _, err := parseFlags([]string{"-hot-k", "100"}, func(k string) string {
		return map[string]string{"ADDR": ":9999", "AGORA_HOT_K": "7", "AGORA_VOTING_WINDOW": "48h"}[k]
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.addr != ":9999" || cfg.hotK != 100 || cfg.votingWindow != 48*time.Hour {
		t.Fatalf("config %+v", cfg)
	}
	if cfg.requireEmail {
		t.Fatal("-require-email is on by default")
	}
	for _, tc := range []struct {
		args []string
		env  string
		want bool
	}{
		{nil, "true", true},
		{[]string{"-require-email"}, "", true},
		{[]string{"-require-email=false"}, "1", false},
	} {
		cfg, _, err := parseFlags(tc.args, func(k string) string { return map[string]string{"AGORA_REQUIRE_EMAIL": tc.env}[k] }, io.Discard)
		if err != nil || cfg.requireEmail != tc.want {
			t.Errorf("%v, AGORA_REQUIRE_EMAIL=%q: require-email %v, %v; want %v", tc.args, tc.env, cfg.requireEmail, err, tc.want)
		}
	}
	// New accounts: new for 24 hours, except with the embedded Redis (for trying agora out) unless
	// -new-account-hours says so.
	for _, tc := range []struct {
		args  []string
		env   map[string]string
		hours int
	}{
		{nil, nil, 0},
		{[]string{"-new-account-hours", "24"}, nil, 24},
		{nil, map[string]string{"AGORA_NEW_ACCOUNT_HOURS": "6"}, 6},
		{[]string{"-redis", "127.0.0.1:6379"}, nil, 24},
		{nil, map[string]string{"REDIS_CLUSTER_ADDRS": "127.0.0.1:7000"}, 24},
	} {
		cfg, _, err := parseFlags(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		if err != nil {
			t.Errorf("%v %v: %v", tc.args, tc.env, err)
		} else if cfg.newAccountHours != tc.hours {
			t.Errorf("%v %v: new for %d hours, want %d", tc.args, tc.env, cfg.newAccountHours, tc.hours)
		}
	}
	// The collector's headroom: 128 MiB unless set; GOGC, when set, keeps Go's pacing.
	for _, tc := range []struct {
		args     []string
		env      map[string]string
		headroom int
		gogc     bool
	}{
		{nil, nil, 128, false},
		{nil, map[string]string{"AGORA_GC_HEADROOM": "32"}, 32, false},
		{[]string{"-gc-headroom", "0"}, map[string]string{"AGORA_GC_HEADROOM": "32"}, 0, false},
		{nil, map[string]string{"GOGC": "200"}, 128, true},
	} {
		cfg, _, err := parseFlags(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		if err != nil {
			t.Errorf("%v %v: %v", tc.args, tc.env, err)
		} else if cfg.gcHeadroom != tc.headroom || cfg.gogcSet != tc.gogc {
			t.Errorf("%v %v: headroom %d, GOGC set %v; want %d, %v", tc.args, tc.env, cfg.gcHeadroom, cfg.gogcSet, tc.headroom, tc.gogc)
		}
	}
	if _, _, err := parseFlags([]string{"-gc-headroom", "-1"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("a negative -gc-headroom was accepted")
	}
	// The live-event logs: 1,000 events and 7 days unless set; at least one event and a second.
	for _, tc := range []struct {
		args   []string
		env    map[string]string
		length int
		age    time.Duration
		ok     bool
	}{
		{nil, nil, 1000, 7 * 24 * time.Hour, true},
		{[]string{"-event-log-length", "50"}, map[string]string{"AGORA_EVENT_LOG_AGE": "2h"}, 50, 2 * time.Hour, true},
		{nil, map[string]string{"AGORA_EVENT_LOG_LENGTH": "10"}, 10, 7 * 24 * time.Hour, true},
		{[]string{"-event-log-length", "0"}, nil, 0, 0, false},
		{[]string{"-event-log-age", "500ms"}, nil, 0, 0, false},
	} {
		cfg, _, err := parseFlags(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		switch {
		case !tc.ok && err == nil:
			t.Errorf("%v %v: accepted", tc.args, tc.env)
		case tc.ok && err != nil:
			t.Errorf("%v %v: %v", tc.args, tc.env, err)
		case tc.ok && (cfg.eventLogLength != tc.length || cfg.eventLogAge != tc.age):
			t.Errorf("%v %v: log of %d events for %s, want %d for %s", tc.args, tc.env, cfg.eventLogLength, cfg.eventLogAge, tc.length, tc.age)
		}
	}
	// An environment value that does not parse stops the start instead of being ignored.
	for _, env := range []map[string]string{
		{"AGORA_VOTING_WINDOW": "a week"},
		{"AGORA_WRITE_LIMIT": "lots"},
		{"AGORA_HOT_K": "hot"},
		{"AGORA_LOG_JSON": "maybe"},
		{"AGORA_GC_HEADROOM": "lots"},
	} {
		if _, _, err := parseFlags(nil, func(k string) string { return env[k] }, io.Discard); err == nil {
			t.Errorf("%v: no error", env)
		}
	}
	if err := run(context.Background(), []string{"-redis", "redis://127.0.0.1:1/0", "bogus"}, func(string) string { return "" }, io.Discard, io.Discard); err == nil {
		t.Fatal("an unreachable redis did not fail start-up")
	}
}

func TestRebuildCommand(t *testing.T) {
	env := map[string]string{"REDIS_URL": "redis://" + storetest.RealServer(t).Addr, "AGORA_PREFIX": storetest.Prefix()}
	s := start(t, env)
	d := s.post(t, "", `mutation { signUp(name: "frank", password: "password1") { token } }`)
	token := d["signUp"].(map[string]any)["token"].(string)
	s.post(t, token, `mutation { createPost(input: {title: "to rebuild", groups: ["ops"]}) { id } }`)
	var out syncBuffer
	if err := run(context.Background(), []string{"rebuild"}, func(k string) string { return env[k] }, &out, &out); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "posts=1") {
		t.Fatalf("rebuild log:\n%s", out.String())
	}
	if err := run(context.Background(), []string{"rebuild"}, func(string) string { return "" }, io.Discard, io.Discard); err == nil {
		t.Fatal("rebuild ran on an empty embedded Redis")
	}
}

// TestAdminCommands grants and revokes site admin by command, as an operator does, and lists the
// admins in a later process, which reads them from Redis.
func TestAdminCommands(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{"REDIS_URL": "redis://" + storetest.RealServer(t).Addr, "AGORA_PREFIX": storetest.Prefix()}
	getenv := func(k string) string { return env[k] }
	s := start(t, env)
	s.post(t, "", `mutation { signUp(name: "Boss", password: "password1") { token } }`)
	d := s.post(t, "", `mutation { signUp(name: "Gone", password: "password1") { token } }`)
	s.post(t, d["signUp"].(map[string]any)["token"].(string), `mutation { deleteAccount(password: "password1", eraseContent: false) }`)
	list := func() string {
		t.Helper()
		var out syncBuffer
		if err := run(ctx, []string{"admin", "list"}, getenv, &out, io.Discard); err != nil {
			t.Fatalf("admin list: %v", err)
		}
		return out.String()
	}
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"admin"}, false},
		{[]string{"admin", "grant"}, false},
		{[]string{"admin", "grant", "nobody"}, false}, // no such account
		{[]string{"admin", "grant", "gone"}, false},   // a deleted account
		{[]string{"admin", "promote", "boss"}, false},
		{[]string{"admin", "grant", "BOSS"}, true},
		{[]string{"admin", "grant", "boss"}, true}, // again: nothing changes
	} {
		if err := run(ctx, tc.args, getenv, io.Discard, io.Discard); (err == nil) != tc.ok {
			t.Fatalf("%q: %v, want success %v", tc.args, err, tc.ok)
		}
	}
	if out := list(); !strings.Contains(out, "boss\tgranted\n") {
		t.Fatalf("admin list after the grant:\n%s", out)
	}
	if err := run(ctx, []string{"admin", "revoke", "boss"}, getenv, io.Discard, io.Discard); err != nil {
		t.Fatalf("admin revoke: %v", err)
	}
	if out := list(); strings.Contains(out, "boss\t") {
		t.Fatalf("admin list after the revocation:\n%s", out)
	}
	if err := run(ctx, []string{"admin", "list"}, func(string) string { return "" }, io.Discard, io.Discard); err == nil {
		t.Fatal("admin ran on an empty embedded Redis")
	}
}

func TestDeadJobCommands(t *testing.T) {
	ctx := context.Background()
	srv := storetest.RealServer(t)
	env := map[string]string{"REDIS_URL": "redis://" + srv.Addr, "AGORA_PREFIX": storetest.Prefix()}
	getenv := func(k string) string { return env[k] }
	rdb := rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})
	defer rdb.Close()
	st, err := store.New(ctx, rdb, store.Options{Prefix: env["AGORA_PREFIX"], Jobs: jobs.Options{MaxTries: 1}})
	if err != nil {
		t.Fatal(err)
	}
	st.Jobs().Handle("broken", func(context.Context, jobs.Job) error { return errors.New("the cause") })
	if err := st.Jobs().Enqueue(ctx, jobs.Job{ID: "broken:1", Kind: "broken"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Jobs().RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	if err := run(ctx, []string{"dead-jobs"}, getenv, &out, &out); err != nil {
		t.Fatalf("dead-jobs: %v", err)
	}
	if !strings.Contains(out.String(), "broken:1\tbroken\t") || !strings.Contains(out.String(), "the cause") {
		t.Fatalf("dead-jobs printed:\n%s", out.String())
	}
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"retry-job"}, false},
		{[]string{"retry-job", "broken:1"}, true},
		{[]string{"retry-job", "broken:1"}, false}, // no longer dead
		{[]string{"retry-job", "broken:1", "extra"}, false},
		{[]string{"dead-jobs", "extra"}, false},
	} {
		if err := run(ctx, tc.args, getenv, io.Discard, io.Discard); (err == nil) != tc.ok {
			t.Errorf("%v: %v", tc.args, err)
		}
	}
}

// TestShutdownEndsStreamsWithUnavailable stops a server holding a live SSE subscription: the
// stream ends with UNAVAILABLE (so the client reconnects elsewhere) and run returns in time.
func TestShutdownEndsStreamsWithUnavailable(t *testing.T) {
	s := start(t, map[string]string{})
	body, _ := json.Marshal(map[string]any{"query": `subscription { postPublished { id } }`})
	req, _ := http.NewRequest(http.MethodPost, s.url+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("subscribe: status %d", res.StatusCode)
	}
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(res.Body)
		got <- string(b)
	}()
	time.Sleep(200 * time.Millisecond) // let the subscription reach the hub
	if err := s.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	select {
	case stream := <-got:
		if !strings.Contains(stream, "UNAVAILABLE") {
			t.Fatalf("stream ended without UNAVAILABLE:\n%s", stream)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the stream did not end")
	}
}

// TestStartupSaysWhatIsWrongWithRedis starts the server against Redis deployments it cannot use
// and checks that it stops at once with one line that says why.
func TestStartupSaysWhatIsWrongWithRedis(t *testing.T) {
	real := storetest.RealServer(t).Addr
	guarded, err := storetest.StartServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(guarded.Stop)
	admin := rdb.NewPlainClient(&rdb.Options{Addr: guarded.Addr})
	if err := admin.ConfigSet(context.Background(), "requirepass", "the-right-one").Err(); err != nil {
		t.Fatal(err)
	}
	_ = admin.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"nothing listening", map[string]string{"REDIS_URL": "redis://" + refused}, "connection refused"},
		{"a wrong password", map[string]string{"REDIS_URL": "redis://" + guarded.Addr, "REDIS_PASSWORD": "wrong"}, "authentication failed"},
		{"no password", map[string]string{"REDIS_URL": "redis://" + guarded.Addr}, "authentication failed"},
		{"TLS to a plain server", map[string]string{"REDIS_URL": "rediss://" + real}, "TLS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			var out bytes.Buffer
			err := run(context.Background(), []string{"-addr", "127.0.0.1:0"}, func(k string) string { return tc.env[k] }, &out, &out)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "load script") {
				t.Fatalf("err = %v, want one line saying %q", err, tc.want)
			}
			if d := time.Since(start); d > 8*time.Second {
				t.Errorf("took %s to give up", d)
			}
			t.Logf("%s", err)
		})
	}
}

// TestMetricsAddr: the metrics are served on -metrics-addr, a loopback address by default, and
// not on the public -addr unless -metrics-addr is "public".
func TestMetricsAddr(t *testing.T) {
	cfg, _, err := parseFlags(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.metricsAddr != "127.0.0.1:9090" {
		t.Errorf("-metrics-addr defaults to %q, want 127.0.0.1:9090", cfg.metricsAddr)
	}
	if _, _, err := parseFlags([]string{"-metrics-addr", ""}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("an empty -metrics-addr was accepted")
	}
	metrics := func(t *testing.T, url string) (int, string) {
		t.Helper()
		res, err := http.Get(url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	port, err := storetest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", port)
	for _, tc := range []struct {
		name          string
		flag          string
		public, apart bool
	}{
		{"an address of their own", metricsAddr, false, true},
		{"off", "off", false, false},
		{"public", "public", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, map[string]string{}, "-metrics-addr", tc.flag)
			defer s.stop()
			if code, body := metrics(t, s.url); (code == http.StatusOK && strings.Contains(body, "agora_live_subscriptions")) != tc.public {
				t.Errorf("GET /metrics on -addr: %d, want served: %v", code, tc.public)
			}
			if !tc.apart {
				return
			}
			if code, body := metrics(t, "http://"+metricsAddr); code != http.StatusOK || !strings.Contains(body, "agora_live_subscriptions") {
				t.Errorf("metrics on -metrics-addr: %d\n%.300s", code, body)
			}
		})
	}
}

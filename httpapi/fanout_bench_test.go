package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// BenchmarkFanout measures live-event fan-out: N graphql-transport-ws subscribers of one post's
// postChanged on one server process, and votes on the post written at a steady rate through a
// second server process sharing a real redis-server. It reports delivered messages per second
// and the delivery latency (from the start of the write to the arrival at the client) at the
// 50th and 99th percentiles, and the CPU time and allocations per delivered message (of the whole
// process: clients and servers share it, so compare them between runs).
//
//	go test ./httpapi -run '^$' -bench Fanout -benchtime 1x
//
// FANOUT_SUBSCRIBERS (comma-separated, default 1000,5000), FANOUT_EVENTS (per iteration, default
// 100) and FANOUT_RATE (writes per second, default 20) change the load. 5,000 subscribers need
// about 10,000 file descriptors (ulimit -n).
func BenchmarkFanout(b *testing.B) {
	sizes := []int{1000, 5000}
	if v := os.Getenv("FANOUT_SUBSCRIBERS"); v != "" {
		sizes = nil
		for _, f := range bytes.Split([]byte(v), []byte(",")) {
			n, err := strconv.Atoi(string(bytes.TrimSpace(f)))
			if err != nil {
				b.Fatalf("FANOUT_SUBSCRIBERS: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	events := envInt(b, "FANOUT_EVENTS", 100)
	rate := envInt(b, "FANOUT_RATE", 20)
	for _, n := range sizes {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) { fanout(b, n, events, rate) })
	}
}

func envInt(b *testing.B, key string, def int) int {
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s: want a positive number, got %q", key, v)
	}
	return n
}

// benchServer is one server process: its own Redis client, store, live events and HTTP server.
func benchServer(b *testing.B, addr, prefix string) (*store.Store, *live.Hub, *httpapi.Handler, string) {
	rc := rdb.NewPlainClient(&rdb.Options{Addr: addr, PoolSize: 64})
	b.Cleanup(func() { _ = rc.Close() })
	st, err := store.New(context.Background(), rc, store.Options{Prefix: prefix, Password: storetest.FastPasswords, WriteLimit: -1})
	if err != nil {
		b.Fatal(err)
	}
	hub := live.New(st, live.Options{})
	h := httpapi.New(httpapi.Config{Store: st, Hub: hub, Live: httpapi.Live{MaxSubscriptions: 10, MaxStreamsPerAddress: -1, MaxAddressCost: -1, MaxAnonAddressCost: -1}})
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	b.Cleanup(func() { _ = hub.Close() })
	return st, hub, h, srv.URL
}

// gql POSTs one operation and fails the benchmark on errors.
func gql(b *testing.B, url, token, query string, vars map[string]any, out any) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, url+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	var r response
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil {
		b.Fatal(err)
	}
	if len(r.Errors) > 0 {
		b.Fatalf("%s: %+v", query, r.Errors)
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			b.Fatal(err)
		}
	}
}

// fanSub is one benchmark subscriber: a socket and the arrival times of its events.
type fanSub struct {
	conn    *websocket.Conn
	arrived []time.Time
	ended   error
}

func fanout(b *testing.B, n, events, rate int) {
	addr := storetest.RealServer(b).Addr
	prefix := storetest.Prefix()
	_, subHub, subH, subURL := benchServer(b, addr, prefix)
	writer, _, _, writeURL := benchServer(b, addr, prefix)
	ctx := context.Background()

	// Viewers: the subscribers take turns with 100 accounts, so viewerVote costs one read per
	// account and event, as it would for distinct people.
	var tokens []string
	for i := range 100 {
		s, err := writer.SignUp(ctx, fmt.Sprintf("viewer%d", i), "password1")
		if err != nil {
			b.Fatal(err)
		}
		tokens = append(tokens, s.Token)
	}
	author, err := writer.SignUp(ctx, "author", "password1")
	if err != nil {
		b.Fatal(err)
	}
	voter, err := writer.SignUp(ctx, "voter", "password1")
	if err != nil {
		b.Fatal(err)
	}
	post, err := writer.CreatePost(ctx, author.User.Key(), store.NewPost{Title: "popular"})
	if err != nil {
		b.Fatal(err)
	}

	query := `subscription($p:ID!){postChanged(postId:$p){id upvotes downvotes score viewerVote author{name}}}`
	total := b.N * events
	subs := make([]*fanSub, n)
	var (
		dialWG  sync.WaitGroup
		readWG  sync.WaitGroup
		dialErr atomic.Pointer[error]
		next    atomic.Int64
	)
	for range 64 {
		dialWG.Add(1)
		go func() {
			defer dialWG.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				s, err := dialFanSub(subURL, tokens[i%len(tokens)], query, post.ID, total)
				if err != nil {
					dialErr.Store(&err)
					return
				}
				subs[i] = s
				readWG.Add(1)
				go func() { defer readWG.Done(); s.read(total) }()
			}
		}()
	}
	dialWG.Wait()
	if p := dialErr.Load(); p != nil {
		b.Fatalf("dial: %v", *p)
	}
	b.Cleanup(func() {
		for _, s := range subs {
			_ = s.conn.CloseNow()
		}
		readWG.Wait()
	})
	deadline := time.Now().Add(time.Minute)
	for subH.LiveSubscriptions() != n {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d subscribers in place", subH.LiveSubscriptions(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}

	written := make([]time.Time, total)
	took := make([]time.Duration, total) // each write's own latency, for comparison
	var memBefore runtime.MemStats
	runtime.ReadMemStats(&memBefore)
	cpuBefore := processCPU(b)
	b.ResetTimer()
	start := time.Now()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	for i := range total {
		<-tick.C
		written[i] = time.Now()
		dir := "UP"
		if i%2 == 1 {
			dir = "NONE"
		}
		gql(b, writeURL, voter.Token, `mutation($p:ID!,$d:VoteDirection!){votePost(postId:$p,direction:$d){id}}`,
			map[string]any{"p": post.ID, "d": dir}, nil)
		took[i] = time.Since(written[i])
	}
	tick.Stop()
	writeTime := time.Since(start)
	done := make(chan struct{})
	go func() { readWG.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
	}
	b.StopTimer()
	cpu := processCPU(b) - cpuBefore
	var memAfter runtime.MemStats
	runtime.ReadMemStats(&memAfter)

	var lat []time.Duration
	var last time.Time
	delivered, ended := 0, 0
	for _, s := range subs {
		for j, at := range s.arrived {
			lat = append(lat, at.Sub(written[j]))
			if at.After(last) {
				last = at
			}
		}
		delivered += len(s.arrived)
		if len(s.arrived) < total {
			ended++
		}
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	span := last.Sub(start)
	perSec := float64(delivered) / span.Seconds()
	b.ReportMetric(perSec, "msgs/s")
	b.ReportMetric(float64(pct(0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pct(0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(100*float64(delivered)/float64(n*total), "delivered-%")
	if delivered > 0 {
		// The process holds both servers and every client, so these are upper bounds of the
		// server's share; compare them between runs.
		b.ReportMetric(float64(cpu.Microseconds())/float64(delivered), "cpu-µs/msg")
		b.ReportMetric(float64(memAfter.Mallocs-memBefore.Mallocs)/float64(delivered), "allocs/msg")
	}
	st := subHub.Stats()
	slices.Sort(took)
	b.Logf("%d subscribers, %d events at %.1f/s: delivered %d of %d messages (%.0f/s over %s), p50 %s, p99 %s, max %s; %d subscribers incomplete, hub dropped %d; the writes themselves took p50 %s",
		n, total, float64(total)/writeTime.Seconds(), delivered, n*total, perSec, span.Round(time.Millisecond),
		pct(0.50).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond), pct(1).Round(10*time.Microsecond), ended, st.Dropped,
		took[len(took)/2].Round(10*time.Microsecond))
}

// processCPU returns the CPU time the process has used, user and system.
func processCPU(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// dialFanSub opens a graphql-transport-ws socket and starts the subscription.
func dialFanSub(base, token, query, postID string, total int) (*fanSub, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, wsURL(base), &websocket.DialOptions{Subprotocols: []string{protoTransportWS}})
	if err != nil {
		return nil, err
	}
	send := func(m wsMsg) error {
		data, _ := json.Marshal(m)
		return conn.Write(ctx, websocket.MessageText, data)
	}
	if err := send(initMsg(token)); err != nil {
		return nil, err
	}
	if _, data, err := conn.Read(ctx); err != nil || !bytes.Contains(data, []byte("connection_ack")) {
		return nil, fmt.Errorf("no ack: %s, %v", data, err)
	}
	if err := send(startMsg(protoTransportWS, "1", query, map[string]any{"p": postID})); err != nil {
		return nil, err
	}
	return &fanSub{conn: conn, arrived: make([]time.Time, 0, total)}, nil
}

// read records the arrival of each event until total have come or the socket ends.
func (s *fanSub) read(total int) {
	for len(s.arrived) < total {
		_, data, err := s.conn.Read(context.Background())
		if err != nil {
			s.ended = err
			return
		}
		now := time.Now()
		var m wsMsg
		if err := json.Unmarshal(data, &m); err != nil {
			s.ended = err
			return
		}
		switch m.Type {
		case "next":
			if bytes.Contains(m.Payload, []byte(`"errors"`)) {
				s.ended = fmt.Errorf("error result: %s", m.Payload)
				return
			}
			s.arrived = append(s.arrived, now)
		case "ping":
			b, _ := json.Marshal(wsMsg{Type: "pong"})
			_ = s.conn.Write(context.Background(), websocket.MessageText, b)
		case "complete", "error":
			return
		}
	}
}

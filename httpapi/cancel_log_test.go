package httpapi_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// levelLog is a slog.Handler that keeps the records at or above a level.
type levelLog struct {
	min     slog.Level
	mu      *sync.Mutex
	records *[]slog.Record
}

func newLevelLog(min slog.Level) levelLog {
	return levelLog{min: min, mu: &sync.Mutex{}, records: &[]slog.Record{}}
}

func (h levelLog) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }
func (h levelLog) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	*h.records = append(*h.records, r.Clone())
	return nil
}
func (h levelLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h levelLog) WithGroup(string) slog.Handler      { return h }

// lines returns the messages kept, with their attributes.
func (h levelLog) lines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range *h.records {
		s := r.Level.String() + " " + r.Message
		r.Attrs(func(a slog.Attr) bool { s += " " + a.String(); return true })
		out = append(out, s)
	}
	return out
}

// TestCancelledSubscriptionsLogNoErrors: a client that completes its subscription, hangs up its
// socket or drops its event stream ends it; none of that is an error of the server's.
func TestCancelledSubscriptionsLogNoErrors(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		st := b.NewStore(t, store.Options{})
		hub := live.New(st, live.Options{})
		logs := newLevelLog(slog.LevelError)
		h := httpapi.New(httpapi.Config{Store: st, Hub: hub, Log: slog.New(logs)})
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		t.Cleanup(func() { _ = hub.Close() })
		a := &api{t: t, srv: srv, h: h, store: st, hub: hub}
		token, _ := a.signUp("canceller")
		post := a.createPost(token, "watched")
		voter, _ := a.signUp("voter")
		stopVoting := keepWriting(2*time.Millisecond, func(i int) {
			a.do(voter, `mutation($p:ID!,$d:VoteDirection!){votePost(postId:$p,direction:$d){id}}`,
				map[string]any{"p": post, "d": []string{"DOWN", "UP"}[i%2]})
		})
		const n = 20
		for _, proto := range protos {
			for i := range n {
				s := subscribe(t, srv.URL, proto, token, `subscription($p:ID!){postChanged(postId:$p){id upvotes}}`, map[string]any{"p": post})
				if i%3 > 0 { // else the client hangs up while the operation starts
					waitSubscribers(t, a, 1)
				}
				if ws, ok := s.(wsSub); ok && i%3 == 1 {
					ws.c.stop(t, "1") // complete (graphql-transport-ws) or stop (graphql-ws)
					waitSubscribers(t, a, 0)
				}
				s.close() // hang up
				waitSubscribers(t, a, 0)
			}
		}
		stopVoting()
		sub := subscribe(t, srv.URL, protoTransportWS, token, `subscription{notificationAdded{id}}`, nil)
		waitSubscribers(t, a, 1)
		sub.close()
		waitSubscribers(t, a, 0)
		if lines := logs.lines(); len(lines) > 0 {
			t.Errorf("%d cancellations logged %d lines at ERROR:\n%s", 3*n+1, len(lines), strings.Join(lines, "\n"))
		}
	})
}

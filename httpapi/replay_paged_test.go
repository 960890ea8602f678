package httpapi_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// replayGate holds back every replay of a live-event log after any cursor but first while it is
// shut: a hook on the server's Redis client.
type replayGate struct {
	first string

	mu   sync.Mutex
	shut chan struct{} // nil: open
}

func (g *replayGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shut = make(chan struct{})
}

func (g *replayGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut != nil {
		close(g.shut)
		g.shut = nil
	}
}

// hold waits while the gate is shut when cmds hold a replay after a cursor other than first.
func (g *replayGate) hold(ctx context.Context, cmds ...rdb.Cmder) {
	for _, c := range cmds {
		a := c.Args() // evalsha <sha> 1 <channel>:log <after> <max>: replay.lua
		if len(a) != 6 || fmt.Sprint(a[0]) != "evalsha" || !strings.HasSuffix(fmt.Sprint(a[3]), ":log") || fmt.Sprint(a[4]) == g.first {
			continue
		}
		g.mu.Lock()
		shut := g.shut
		g.mu.Unlock()
		if shut != nil {
			select {
			case <-shut:
			case <-ctx.Done():
			}
		}
	}
}

// hook is the client hook that holds the replays.
func (g *replayGate) hook() *storetest.Hook {
	return storetest.OnEach(func(ctx context.Context, cmds []rdb.Cmder, next rdb.ProcessPipelineHook) error {
		g.hold(ctx, cmds...)
		return next(ctx, cmds)
	})
}

// TestResumeReadsTheLogAPageAtATime resumes, on every transport, from before a backlog of more
// events than one read of the log returned: the first events arrive while every later read of
// the log is held back — the stream delivers a page before it reads the next, instead of
// reading the whole log (up to 10,000 new posts, ~1.4 KiB each in memory) before its first
// event, which let one socket of anonymous resumes hold gigabytes — and once the reads go on,
// the rest arrives, each event once, in order.
func TestResumeReadsTheLogAPageAtATime(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		gate := &replayGate{}
		b = b.Hooked(t, gate.hook())
		st := b.NewStore(t, store.Options{})
		a := serve(t, st, httpapi.Live{})
		ctx := context.Background()
		_, aliceID := a.signUp("alice")
		alice, err := store.ParseUserID(aliceID)
		if err != nil {
			t.Fatal(err)
		}
		p, err := st.CreatePost(ctx, alice, store.NewPost{Title: "a busy thread"})
		if err != nil {
			t.Fatal(err)
		}
		pid, err := store.PostKey(p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if gate.first, err = st.LogHead(ctx, st.Channels().Comments(pid)); err != nil {
			t.Fatal(err)
		}
		const backlog = 250 // more than one read of the log returned before: 200
		var want []string
		for i := range backlog {
			body := fmt.Sprintf("comment %d", i)
			if _, err := st.CreateComment(ctx, alice, store.NewComment{PostID: p.ID, Body: body}); err != nil {
				t.Fatal(err)
			}
			want = append(want, body)
		}
		q := `subscription($p: ID!, $after: String) { commentAdded(postId: $p, after: $after) { body } }`
		for _, proto := range protos {
			t.Run(proto, func(t *testing.T) {
				gate.close()
				defer gate.open()
				s := subscribe(t, a.srv.URL, proto, "", q, map[string]any{"p": p.ID, "after": gate.first})
				defer s.close()
				var got []string
				var c struct{ CommentAdded struct{ Body string } }
				next(t, s, &c) // before the fix: never, the replay's second read being held
				got = append(got, c.CommentAdded.Body)
				gate.open()
				for len(got) < backlog {
					next(t, s, &c)
					got = append(got, c.CommentAdded.Body)
				}
				if !slices.Equal(got, want) {
					t.Errorf("replayed %d events, want the %d in order: %v", len(got), backlog, got)
				}
			})
		}
	})
}

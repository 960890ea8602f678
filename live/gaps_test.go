package live_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agora/agora/live"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestOwedGapsRetryOncePerChannel keeps a subscriber from reading while events keep coming on its
// channel: the hub owes it a Gap and retries it, one retry at a time for the channel, not one
// more for every event its full buffer misses (each retry rescheduled itself every 20 ms and went
// over every subscriber of the channel under the hub's lock: a client reading slowly on a busy
// channel piled them up by the hundreds). Once the subscriber reads, it gets its Gap, and the
// retries stop.
func TestOwedGapsRetryOncePerChannel(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{})
		h := newHub(t, s, live.Options{EventBuffer: 1})
		stalled, err := h.SubscribePostPublished(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		defer stalled.Close()
		const n = 40
		channel := s.Channels().Published("")
		for i := range n {
			if err := s.Publish(ctx, channel, fmt.Sprintf(`{"id":"1-%d","post":"post:%d"}`, i+1, i+1)); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(eventWait)
		for st := h.Stats(); st.Delivered+st.Dropped < n; st = h.Stats() {
			if time.Now().After(deadline) {
				t.Fatalf("stats %+v: the %d events did not all arrive within %s", st, n, eventWait)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if r := live.GapRetries(h); r > 1 {
			t.Errorf("%d retries of the owed gap scheduled for one channel, want at most 1", r)
		}
		if ev := next(t, stalled); ev.Gap || ev.Post != "post:1" {
			t.Fatalf("first event %+v, want post:1", ev)
		}
		if ev := next(t, stalled); !ev.Gap {
			t.Fatalf("after the buffer: %+v, want the gap", ev)
		}
		deadline = time.Now().Add(eventWait)
		for live.GapRetries(h) != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d retries still scheduled after the gap was paid", live.GapRetries(h))
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

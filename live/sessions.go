package live

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agora/agora/store"
)

// SessionWatch follows one session for the live streams it opened: Ended is closed once the
// session has ended — logOut, logOutEverywhere, or changePassword from another session — on
// whichever replica that happened, so that its streams end too. It learns the end from the
// user's Sessions channel, through the hub like every live event, and checks the session itself
// (store.SessionActive, which does not extend it) when it starts, when its subscription had a
// gap, and every recheck interval, which also catches a session that expired.
//
// It also keeps the user's live filters for the streams (Blocks, ShowNSFW): read when the watch
// starts, then changed by each block, unblock and change of the NSFW setting the channel
// announces (store.EventIDs.Blocks and NSFW), and read whole again after a gap in the
// subscription, so that a stream stops delivering a user's posts and comments as soon as the
// viewer blocks them, and NSFW posts as soon as the viewer stops showing them, not when the
// stream is opened again.
type SessionWatch struct {
	sub     *EventStream
	user    store.UserKey
	filters atomic.Pointer[store.LiveFilters]
	ended   chan struct{}
	end     sync.Once
	cancel  context.CancelFunc
	done    chan struct{}
}

// WatchSession starts watching the session of token, until Close. It returns once the watch is
// in place: an end of the session after it returns closes Ended. A token that is malformed, or
// whose session has already ended, gives a watch whose Ended is closed.
func (h *Hub) WatchSession(ctx context.Context, token string, recheck time.Duration) (*SessionWatch, error) {
	w := &SessionWatch{ended: make(chan struct{}), done: make(chan struct{})}
	user, id, ok := store.SessionOf(token)
	if !ok {
		w.stop()
		close(w.done)
		w.cancel = func() {}
		return w, nil
	}
	w.user = user
	sub, err := h.subscribeAs(ctx, h.ch.Sessions(string(user)), true)
	if err != nil {
		return nil, err
	}
	w.sub = sub
	// The subscription is confirmed: an end or a block from now on is delivered, and one before
	// it is seen by these reads.
	if err := w.check(ctx, h.st, token, true); err != nil {
		sub.Close()
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w.cancel = cancel
	go w.run(wctx, h, token, id, recheck)
	return w, nil
}

// Ended is closed when the session has ended.
func (w *SessionWatch) Ended() <-chan struct{} { return w.ended }

// Blocks returns the user's block list as the watch knows it now: nil blocks nobody (a watch of
// a malformed or ended session). Its revision is the one read when the list was last read whole,
// so it is for filtering live events, not for recording a response's revisions.
func (w *SessionWatch) Blocks() *store.Blocks {
	if f := w.filters.Load(); f != nil {
		return f.Blocks
	}
	return nil
}

// ShowNSFW reports whether the user shows NSFW posts, as the watch knows it now (false for a
// watch of a malformed or ended session).
func (w *SessionWatch) ShowNSFW() bool {
	f := w.filters.Load()
	return f != nil && f.ShowNSFW
}

// Close stops the watch. It is safe to call more than once.
func (w *SessionWatch) Close() {
	w.cancel()
	if w.sub != nil {
		w.sub.Close()
	}
	<-w.done
}

func (w *SessionWatch) stop() { w.end.Do(func() { close(w.ended) }) }

// check ends the watch when the session is no longer on, and with filters reads the user's live
// filters whole too, in the same round trip.
func (w *SessionWatch) check(ctx context.Context, st *store.Store, token string, filters bool) error {
	var on bool
	var err error
	if filters {
		var f store.LiveFilters
		if on, f, err = st.SessionState(ctx, token); err == nil {
			w.filters.Store(&f)
		}
	} else {
		on, err = st.SessionActive(ctx, token)
	}
	if err == nil && !on {
		w.stop()
	}
	return err
}

// run follows the user's Sessions channel until the session ends, the watch is closed or the
// hub stops.
func (w *SessionWatch) run(ctx context.Context, h *Hub, token, id string, recheck time.Duration) {
	defer close(w.done)
	var tick <-chan time.Time
	if recheck > 0 {
		t := time.NewTicker(recheck)
		defer t.Stop()
		tick = t.C
	}
	stale := false // the live filters may have missed a change: read them whole at the next chance
	for {
		again := false
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.sub.Events():
			if !ok {
				return // closed, or the hub stopped: the streams end anyway
			}
			if slices.Contains(strings.Fields(ev.Sessions), id) {
				w.stop()
				return
			}
			// Only the run goroutine stores changed filters, so the load and the store do not race
			// with another change; a whole read (check) runs here too.
			if f := w.filters.Load(); f != nil {
				if changed, ok := f.Changed(ev.EventIDs); ok {
					w.filters.Store(&changed)
				}
			}
			again = ev.Gap // an end, or a change of the filters, may have been missed
			stale = stale || ev.Gap
		case <-tick:
			again = true
		}
		if again || stale {
			if err := w.check(ctx, h.st, token, stale); err != nil {
				// Redis did not answer: the next tick or gap asks again.
				h.opts.Log.DebugContext(ctx, "live events: check session", "err", err)
			} else {
				stale = false
			}
			select {
			case <-w.ended:
				return
			default:
			}
		}
	}
}

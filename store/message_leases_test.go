package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestSendLeaseEndsWhereItsChecksChange: a message on a send lease makes none of the checks of
// other slots, so every change of what they read ends the leases it concerns: after a block
// either way, a site ban of the sender, the deletion of the recipient's account, or the sender's
// message limit filled, a message the same process sends on its lease is refused as the checks
// would refuse it, and leaves no trace — no message, no unread count, no key of a deleted
// account's mailbox made again.
func TestSendLeaseEndsWhereItsChecksChange(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(ctx context.Context, s *store.Store) error
		want   store.Kind
	}{
		{"recipient blocks", func(ctx context.Context, s *store.Store) error { _, err := s.Block(ctx, "bob", "amy"); return err }, store.KindForbidden},
		{"sender blocks", func(ctx context.Context, s *store.Store) error { _, err := s.Block(ctx, "amy", "bob"); return err }, store.KindForbidden},
		{"site ban", func(ctx context.Context, s *store.Store) error {
			_, err := s.BanUser(ctx, "root", "amy", "", nil, "spam")
			return err
		}, store.KindBanned},
		{"recipient deleted", func(ctx context.Context, s *store.Store) error { return s.DeleteAccount(ctx, "bob", "password1", true) }, store.KindNotFound},
		// The limit is 4 messages a minute: the checked message and the two on its lease below
		// are 3 of amy's, her message to cat the 4th, which other conversations' leases do not
		// see: the lease allows one message more, which finds the limit full and ends it.
		{"limit filled elsewhere", func(ctx context.Context, s *store.Store) error {
			_, err := s.SendMessage(ctx, "amy", "cat", "elsewhere", "")
			return err
		}, store.KindRateLimited},
	} {
		t.Run(c.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				b, rt := b.Counted(t)
				prefix := storetest.Prefix()
				s := b.NewStore(t, store.Options{Prefix: prefix, WriteLimit: 1000, Messages: store.MessageOptions{PerWindow: 4}})
				signUp(t, s, "root", "amy", "bob", "cat")
				if err := s.GrantAdmin(ctx, "root"); err != nil {
					t.Fatal(err)
				}
				send(t, s, "bob", "amy", "hello")
				send(t, s, "amy", "bob", "checked") // grants amy's lease
				before := rt.Count()
				send(t, s, "amy", "bob", "on the lease")
				if n := rt.Count() - before; n != 1 {
					t.Fatalf("a message on a lease took %d round trips, want 1", n)
				}
				if c.name == "limit filled elsewhere" {
					send(t, s, "amy", "bob", "on the lease too")
				}
				unreadBefore := -1
				if c.name != "recipient deleted" {
					unreadBefore = unread(t, s, "bob")
				}
				if err := c.change(ctx, s); err != nil {
					t.Fatal(err)
				}
				if c.name == "limit filled elsewhere" {
					send(t, s, "amy", "bob", "one more")
					unreadBefore++
				}
				keysBefore := allKeys(t, b, prefix+"*")
				if _, err := s.SendMessage(ctx, "amy", "bob", "after the change", ""); !store.IsKind(err, c.want) {
					t.Fatalf("a message after the change: %v, want %v", err, c.want)
				}
				p, err := s.NewLoader().Messages(ctx, "amy", "bob", store.Window{First: 10})
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range p.Items {
					if m.Text == "after the change" {
						t.Errorf("the refused message is in the conversation")
					}
				}
				if unreadBefore >= 0 {
					if n := unread(t, s, "bob"); n != unreadBefore {
						t.Errorf("bob's unread messages %d after the refused one, want %d", n, unreadBefore)
					}
					return
				}
				// No key is made again, of the deleted account's mailbox or any other (but the job
				// engine's, of the message's repair note).
				for _, k := range keysAdded(t, b, prefix, keysBefore) {
					if !strings.HasPrefix(k, prefix+"{j:") {
						t.Errorf("the refused message made the key %s", k)
					}
				}
				for _, k := range allKeys(t, b, prefix+"{mb:bob}*") {
					if slices.Contains([]string{":unread", ":runread", ":reqs", ":state", ":ver"}, k[strings.LastIndex(k, ":"):]) {
						t.Errorf("the deleted account's mailbox holds %s", k)
					}
				}
			})
		})
	}
}

// TestSendLeaseBoundsMessagesWithinItsConversation: a lease allows what the sender's message
// limit left when it was granted, exactly, then the checks refuse as they would.
func TestSendLeaseBoundsMessagesWithinItsConversation(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		b, rt := b.Counted(t)
		s := b.NewStore(t, store.Options{WriteLimit: 1000, Messages: store.MessageOptions{PerWindow: 5}})
		signUp(t, s, "amy", "bob")
		send(t, s, "bob", "amy", "hello")
		for i := range 5 {
			before := rt.Count()
			send(t, s, "amy", "bob", fmt.Sprint("m", i))
			if n := rt.Count() - before; i > 0 && n != 1 {
				t.Errorf("message %d took %d round trips, want 1 (on the lease)", i, n)
			}
		}
		if _, err := s.SendMessage(ctx, "amy", "bob", "one too many", ""); !store.IsKind(err, store.KindRateLimited) {
			t.Errorf("past the message limit on a lease: %v, want RATE_LIMITED", err)
		}
		if n := unread(t, s, "bob"); n != 5 {
			t.Errorf("bob's unread count %d, want 5", n)
		}
	})
}

// TestSendLeaseEndsWithANewAddress: under Options.RequireEmail, a new address (not verified yet)
// stops the account's messages, also in a conversation whose lease held.
func TestSendLeaseEndsWithANewAddress(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		b, rt := b.Counted(t)
		s, srv, _ := mailStoreWith(t, b, store.Options{RequireEmail: true})
		for i, name := range []string{"amy", "bob"} {
			if _, err := s.SignUpWithEmail(ctx, name, "password1", name+"@example.org"); err != nil {
				t.Fatal(err)
			}
			settle(t, s)
			if _, err := s.VerifyEmail(ctx, mailToken(t, srv, i+1)); err != nil {
				t.Fatalf("verify: %v", err)
			}
		}
		send(t, s, "bob", "amy", "hello")
		send(t, s, "amy", "bob", "checked")
		before := rt.Count()
		send(t, s, "amy", "bob", "on the lease")
		if n := rt.Count() - before; n != 1 {
			t.Fatalf("a message on a lease took %d round trips, want 1", n)
		}
		if _, err := s.SetEmail(ctx, "amy", "amy2@example.org", "password1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SendMessage(ctx, "amy", "bob", "unverified", ""); !store.IsKind(err, store.KindEmailUnverified) {
			t.Errorf("a message from a new, unverified address: %v, want EMAIL_UNVERIFIED", err)
		}
	})
}

// pipelineHook runs a function around the first pipeline that match selects, once armed:
//   - between() then the pipeline;
//   - with first: the commands first selects, then between(), then the others — as a Redis
//     Cluster may, running each node's part of a pipeline apart, in any order;
//   - with n: it holds every matching pipeline until n of them arrived, runs them in the order of
//     their message ids, and holds the leases' drops (a later round trip of each send) until all
//     ran: n requests sent at once whose lease pipelines reach Redis before the first drop does.
type pipelineHook struct {
	armed   atomic.Bool
	match   func(cmds []rdb.Cmder) bool
	first   func(cmd string) bool
	between func()

	n       int
	mu      sync.Mutex
	waiting []pendingPipeline
	done    chan struct{} // closed once the n held pipelines ran
}

type pendingPipeline struct {
	id       string
	run, ran chan struct{}
}

// cmdText is a command's arguments joined by spaces.
func cmdText(c rdb.Cmder) string {
	args := make([]any, len(c.Args()))
	for j, arg := range c.Args() {
		args[j] = storetest.ArgString(arg)
	}
	return fmt.Sprintln(args...)
}

func (h *pipelineHook) barrier(ctx context.Context, cmds []rdb.Cmder, next rdb.ProcessPipelineHook) error {
	id := ""
	for _, c := range cmds {
		for _, a := range c.Args() {
			if v := storetest.ArgString(a); len(v) == 19 && id == "" && v[0] == '1' {
				id = v
			}
		}
	}
	p := pendingPipeline{id: id, run: make(chan struct{}), ran: make(chan struct{})}
	h.mu.Lock()
	h.waiting = append(h.waiting, p)
	if len(h.waiting) == h.n {
		h.armed.Store(false)
		w := slices.Clone(h.waiting)
		slices.SortFunc(w, func(x, y pendingPipeline) int { return strings.Compare(x.id, y.id) })
		go func() {
			for _, q := range w {
				close(q.run)
				<-q.ran
			}
			close(h.done)
		}()
	}
	h.mu.Unlock()
	<-p.run
	err := next(ctx, cmds)
	close(p.ran)
	return err
}

func (h *pipelineHook) DialHook(next rdb.DialHook) rdb.DialHook          { return next }
func (h *pipelineHook) ProcessHook(next rdb.ProcessHook) rdb.ProcessHook { return next }
func (h *pipelineHook) ProcessPipelineHook(next rdb.ProcessPipelineHook) rdb.ProcessPipelineHook {
	return func(ctx context.Context, cmds []rdb.Cmder) error {
		if h.n > 0 && hasArg("drop")(cmds) {
			select { // a lease's drop waits for the held pipelines
			case <-h.done:
			case <-time.After(5 * time.Second):
			}
			return next(ctx, cmds)
		}
		if !h.armed.Load() || !h.match(cmds) {
			return next(ctx, cmds)
		}
		if h.n > 0 {
			return h.barrier(ctx, cmds, next)
		}
		if !h.armed.CompareAndSwap(true, false) {
			return next(ctx, cmds)
		}
		if h.first == nil {
			h.between()
			return next(ctx, cmds)
		}
		var a, b []rdb.Cmder
		for _, c := range cmds {
			if h.first(cmdText(c)) {
				a = append(a, c)
			} else {
				b = append(b, c)
			}
		}
		errA := next(ctx, a)
		h.between()
		errB := next(ctx, b)
		return errors.Join(errA, errB)
	}
}

// hasArg: a pipeline with a command that has the argument arg.
func hasArg(arg string) func(cmds []rdb.Cmder) bool {
	return func(cmds []rdb.Cmder) bool {
		for _, c := range cmds {
			for _, a := range c.Args() {
				if storetest.ArgString(a) == arg {
					return true
				}
			}
		}
		return false
	}
}

// isGateOf: the pipeline of the checks of a message to (its HMGET of the conversation).
func isGateOf(to string) func(cmds []rdb.Cmder) bool {
	return func(cmds []rdb.Cmder) bool {
		for _, c := range cmds {
			if t := strings.ToLower(cmdText(c)); strings.HasPrefix(t, "hmget ") && strings.Contains(t, " d:"+to) {
				return true
			}
		}
		return false
	}
}

// hooked returns a store on a client of its own carrying h, and a plain store, on one keyspace.
func hooked(t *testing.T, b storetest.Backend, h *pipelineHook, o store.Options) (hs, plain *store.Store) {
	t.Helper()
	o.Prefix = storetest.Prefix()
	plain = b.NewStore(t, o)
	hb := b
	hb.Client = b.NewClient(t)
	hb.Client.AddHook(h)
	return hb.NewStore(t, o), plain
}

// leaseChanges are the changes that end a lease, with what a message after them gets.
var leaseChanges = []struct {
	name   string
	slot   string // the slot of the check that reads it
	change func(ctx context.Context, s *store.Store) error
	want   store.Kind
}{
	{"recipient blocks", "{u:bob}", func(ctx context.Context, s *store.Store) error { _, err := s.Block(ctx, "bob", "amy"); return err }, store.KindForbidden},
	{"site ban", "{u:amy}", func(ctx context.Context, s *store.Store) error {
		_, err := s.BanUser(ctx, "root", "amy", "", nil, "spam")
		return err
	}, store.KindBanned},
	{"recipient deleted", "{u:bob}", func(ctx context.Context, s *store.Store) error {
		return s.DeleteAccount(ctx, "bob", "password1", true)
	}, store.KindNotFound},
}

// TestSendLeaseNotGrantedAcrossAChange: a change that lands between a message's checks and its
// write — the conversation's first message, or a later one that may grant a lease — lets that
// one message through, as the checks saw no change, and no message after it: the lease version
// a grant compares was read a round trip before the checks, so the change's end of the leases
// raised it after (and a first message, whose process read no version, grants none). Found by an
// adversarial review: revoking found no conversation to raise the version of, and the grant
// compared the version its own checks read.
func TestSendLeaseNotGrantedAcrossAChange(t *testing.T) {
	for _, first := range []bool{true, false} {
		for _, c := range leaseChanges {
			t.Run(fmt.Sprintf("%s/first=%v", c.name, first), func(t *testing.T) {
				storetest.Run(t, func(t *testing.T, b storetest.Backend) {
					ctx := context.Background()
					h := &pipelineHook{match: hasArg("grant")}
					s, plain := hooked(t, b, h, store.Options{WriteLimit: 1000})
					signUp(t, plain, "root", "amy", "bob")
					if err := plain.GrantAdmin(ctx, "root"); err != nil {
						t.Fatal(err)
					}
					if !first {
						send(t, s, "bob", "amy", "hello") // bob accepts; s reads the version
					}
					h.between = func() {
						if err := c.change(ctx, plain); err != nil {
							t.Errorf("change: %v", err)
						}
					}
					h.armed.Store(true)
					if _, err := s.SendMessage(ctx, "amy", "bob", "checked before the change", ""); err != nil {
						t.Fatalf("the message checked before the change: %v", err)
					}
					if h.armed.Load() {
						t.Fatal("the hook did not run")
					}
					for i := range 3 {
						if _, err := s.SendMessage(ctx, "amy", "bob", fmt.Sprint("after the change ", i), ""); !store.IsKind(err, c.want) {
							t.Fatalf("message %d after the change: %v, want %v", i, err, c.want)
						}
					}
				})
			})
		}
	}
}

// TestSendLeaseNotGrantedAcrossSlots: on a cluster a message's checks run on the slots of the
// sender and the recipient apart; a change whose write and end of the leases land after the
// check that reads it has run, and before the rest, grants no lease (the version the grant
// compares was read before the checks).
func TestSendLeaseNotGrantedAcrossSlots(t *testing.T) {
	for _, c := range leaseChanges[:2] {
		t.Run(c.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, b storetest.Backend) {
				ctx := context.Background()
				h := &pipelineHook{match: isGateOf("bob"), first: func(cmd string) bool { return strings.Contains(cmd, c.slot) }}
				s, plain := hooked(t, b, h, store.Options{WriteLimit: 1000})
				signUp(t, plain, "root", "amy", "bob")
				if err := plain.GrantAdmin(ctx, "root"); err != nil {
					t.Fatal(err)
				}
				send(t, s, "bob", "amy", "hello")
				send(t, plain, "amy", "bob", "hi") // both accepted, in both lists; s holds no lease
				h.between = func() {
					if err := c.change(ctx, plain); err != nil {
						t.Errorf("change: %v", err)
					}
				}
				h.armed.Store(true)
				if _, err := s.SendMessage(ctx, "amy", "bob", "checked across the change", ""); err != nil {
					t.Fatalf("checked message: %v", err)
				}
				if h.armed.Load() {
					t.Fatal("the hook did not run")
				}
				if _, err := s.SendMessage(ctx, "amy", "bob", "after the change", ""); !store.IsKind(err, c.want) {
					t.Fatalf("a message after the change: %v, want %v", err, c.want)
				}
			})
		})
	}
}

// TestSendLeaseConcurrentSendsPastAFullLimit: messages sent at once on a lease, after the
// sender's limit filled elsewhere, pass at most what the lease allowed when it was granted (what
// the limit had left then); and a message request gets no lease, so requests to strangers stay
// within the limit exactly however many are sent at once.
func TestSendLeaseConcurrentSendsPastAFullLimit(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		const conc = 4
		h := &pipelineHook{match: hasArg("use"), n: 3, done: make(chan struct{})}
		s, _ := hooked(t, b, h, store.Options{WriteLimit: 1000, Messages: store.MessageOptions{PerWindow: 5}})
		signUp(t, s, "amy", "bob", "cat", "dan", "eve")
		send(t, s, "bob", "amy", "hello")
		send(t, s, "amy", "bob", "checked") // 1 of 5: amy's lease with bob allows 4 more
		send(t, s, "amy", "bob", "leased")  // 2 of 5: 3 left on the lease
		for _, o := range []string{"cat", "dan", "eve"} {
			send(t, s, "amy", o, "elsewhere") // 5 of 5: the limit is full
		}
		sendAtOnce := func(to string) int {
			var wg sync.WaitGroup
			var sent atomic.Int32
			for i := range conc {
				wg.Go(func() {
					if _, err := s.SendMessage(ctx, "amy", store.UserKey(to), fmt.Sprint("at once ", i), ""); err == nil {
						sent.Add(1)
					} else if !store.IsKind(err, store.KindRateLimited) {
						t.Errorf("a message at once: %v", err)
					}
				})
			}
			wg.Wait()
			return int(sent.Load())
		}
		h.armed.Store(true)
		if n := sendAtOnce("bob"); n > 3 {
			t.Errorf("%d messages on the lease past the full limit, want at most the 3 it allowed", n)
		}
		if n := sendAtOnce("cat"); n != 0 {
			t.Errorf("%d message requests past the full limit, want none", n)
		}
	})
}

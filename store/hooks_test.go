package store_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/jobs"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// The client hooks the store's tests share, each a storetest.Hook.

// scriptsTwice returns a client hook that sends every script twice — alone, or the whole
// pipeline that holds one — while on is set, as a client does when the replies were lost and it
// sends the commands again. The job engine's claims are left alone: a claim sent again takes
// nothing, and its jobs wait for their lease to end (jobs_claim.lua, "Repeat"), later than a
// test looks.
func scriptsTwice(on *atomic.Bool) *storetest.Hook {
	return storetest.OnEach(func(ctx context.Context, cmds []rdb.Cmder, next rdb.ProcessPipelineHook) error {
		if on.Load() && slices.ContainsFunc(cmds, isScript) && !slices.ContainsFunc(cmds, isJobClaim) {
			if err := next(ctx, cmds); err != nil {
				return err
			}
		}
		return next(ctx, cmds)
	})
}

// runTwice adds a hook to the backend's client that sends every script twice (scriptsTwice),
// and returns its switch, on.
func runTwice(b storetest.Backend) *atomic.Bool {
	on := new(atomic.Bool)
	b.Client.AddHook(scriptsTwice(on))
	on.Store(true)
	return on
}

// jobClaimSHA is the digest by which the job engine sends its claims (jobs_claim.lua).
var jobClaimSHA = sync.OnceValue(func() string {
	text, err := fs.ReadFile(jobs.Scripts(), "jobs_claim.lua")
	if err != nil {
		panic(err)
	}
	sum := sha1.Sum(text)
	return hex.EncodeToString(sum[:])
})

// isJobClaim reports whether c is a claim of the job engine.
func isJobClaim(c rdb.Cmder) bool {
	args := c.Args()
	return c.Name() == "evalsha" && len(args) > 1 && storetest.ArgString(args[1]) == jobClaimSHA()
}

// isScript reports whether c runs a script.
func isScript(c rdb.Cmder) bool { n := c.Name(); return n == "evalsha" || n == "eval" }

// afterFirst runs then once, right after the first command whose arguments, joined by spaces and
// in lower case, match: a write of another client landing between two round trips of a request,
// or between a rebuild's read and what it does with it.
type afterFirst struct {
	match func(args string) bool
	then  func()
	done  atomic.Bool
}

// after runs then if one of cmds, just sent, is the first to match.
func (h *afterFirst) after(cmds []rdb.Cmder) {
	for _, cmd := range cmds {
		args := make([]string, len(cmd.Args()))
		for i, a := range cmd.Args() {
			args[i] = storetest.ArgString(a)
		}
		if h.match(strings.ToLower(strings.Join(args, " "))) && h.done.CompareAndSwap(false, true) {
			h.then()
			return
		}
	}
}

// hook is the client hook that runs then.
func (h *afterFirst) hook() *storetest.Hook { return storetest.After(h.after) }

// commandCount counts the commands a client sends while it is on (see during).
type commandCount struct {
	on atomic.Bool
	n  atomic.Int64
}

// hook is the client hook that counts.
func (c *commandCount) hook() *storetest.Hook {
	return storetest.Before(func(cmds []rdb.Cmder) {
		if c.on.Load() {
			c.n.Add(int64(len(cmds)))
		}
	})
}

// during runs f and returns how many commands the client sent while it ran.
func (c *commandCount) during(f func()) int64 {
	c.n.Store(0)
	c.on.Store(true)
	f()
	c.on.Store(false)
	return c.n.Load()
}

// beforeScript runs a function once, just before the first script after arm — sent alone or in
// a pipeline — that has an argument match accepts (nil: any script).
type beforeScript struct {
	mu    sync.Mutex
	match func(arg string) bool
	f     func()
}

// arm sets the function, and the scripts it runs before.
func (h *beforeScript) arm(match func(arg string) bool, f func()) {
	h.mu.Lock()
	h.match, h.f = match, f
	h.mu.Unlock()
}

// hook is the client hook that runs the function.
func (h *beforeScript) hook() *storetest.Hook {
	return storetest.OnEach(func(ctx context.Context, cmds []rdb.Cmder, next rdb.ProcessPipelineHook) error {
		if f := h.take(cmds); f != nil {
			f()
		}
		return next(ctx, cmds)
	})
}

// take returns the function, disarmed, when cmds hold a script it runs before.
func (h *beforeScript) take(cmds []rdb.Cmder) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.f == nil {
		return nil
	}
	for _, c := range cmds {
		if c.Name() != "evalsha" {
			continue
		}
		if h.match == nil || slices.ContainsFunc(c.Args(), func(a any) bool { return h.match(storetest.ArgString(a)) }) {
			f := h.f
			h.f = nil
			return f
		}
	}
	return nil
}

// argIs accepts an argument equal to want.
func argIs(want string) func(arg string) bool { return func(a string) bool { return a == want } }

// acrossDeletion is a store whose client runs a beforeScript hook, and another of the same
// backend that the hook leaves alone: the hook deletes an account with the other, its whole
// chain included, right before a script of the first — a write whose checks passed just before
// the deletion, and whose script lands after it.
type acrossDeletion struct {
	s, other *store.Store
	prefix   string // their keys'
	hook     *beforeScript
}

// newAcrossDeletion makes the two stores, with a prefix of their own, limits that the test's
// writes stay within, and no new-account limits.
func newAcrossDeletion(t *testing.T, b storetest.Backend) *acrossDeletion {
	t.Helper()
	prefix := storetest.Prefix()
	opts := store.Options{Prefix: prefix, WriteLimit: 1000, NewAccount: store.NewAccountLimits{Age: -1}}
	hook := &beforeScript{}
	return &acrossDeletion{s: b.Hooked(t, hook.hook()).NewStore(t, opts), other: b.NewStore(t, opts), prefix: prefix, hook: hook}
}

// arm deletes uid (with eraseContent when erase), and runs its chain, just before the first
// script of the hooked store that has an argument match accepts.
func (d *acrossDeletion) arm(t *testing.T, uid string, erase bool, match func(arg string) bool) {
	d.hook.arm(match, func() {
		if err := d.other.DeleteAccount(context.Background(), store.UserKey(uid), "password1", erase); err != nil {
			t.Errorf("delete %s: %v", uid, err)
		}
		settle(t, d.other) // the deletion's whole chain
	})
}

// deleted fails the test unless uid's account is deleted: the hook ran.
func (d *acrossDeletion) deleted(t *testing.T, uid string) {
	t.Helper()
	if gone, err := d.s.NewLoader().DeletedAccount(context.Background(), store.UserKey(uid)); err != nil || !gone {
		t.Fatalf("the hook did not delete %s before the write's script (%v)", uid, err)
	}
}

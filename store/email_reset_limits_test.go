package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestPasswordResetLimits: requestPasswordReset is limited per address (ResetsPerEmail) and per
// client address (ResetsPerClient) within ResetWindow: the request past a limit is refused with
// RATE_LIMITED and the wait, exactly alike for an address that has an account and one that has
// none (no enumeration), and the window frees up once it has passed; a negative WriteLimit
// switches both limits off.
func TestPasswordResetLimits(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		const perEmail, perClient = 2, 5
		newStore := func(writeLimit int) (*store.Store, *storetest.Clock) {
			clk := storetest.NewClock()
			s := b.NewStore(t, store.Options{Prefix: storetest.Prefix(), Now: clk.Now, WriteLimit: writeLimit,
				Mail: store.MailOptions{ResetsPerEmail: perEmail, ResetsPerClient: perClient, ResetWindow: time.Hour}})
			ctx := context.Background()
			if _, err := s.SignUp(ctx, "ann", "password1"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SetEmail(ctx, "ann", "ann@example.org", "password1"); err != nil {
				t.Fatal(err)
			}
			return s, clk
		}
		// refusal is how a refused request reads to its client: kind, message and wait.
		refusal := func(err error) string {
			var e *store.Error
			if !store.IsKind(err, store.KindRateLimited) || !asStoreError(err, &e) {
				return fmt.Sprintf("not RATE_LIMITED: %v", err)
			}
			return fmt.Sprintf("RATE_LIMITED: %s (retry after %v)", e.Msg, e.RetryAfter)
		}

		t.Run("per address", func(t *testing.T) {
			s, clk := newStore(1000)
			var refused []string
			for _, addr := range []string{"ann@example.org", "nobody@example.org"} {
				for i := range perEmail {
					// Each from another client, so that only the address's limit counts.
					ctx := store.WithClient(context.Background(), fmt.Sprintf("10.0.%d.%d", len(refused), i))
					if err := s.RequestPasswordReset(ctx, addr); err != nil {
						t.Fatalf("%s: request %d: %v", addr, i+1, err)
					}
				}
				ctx := store.WithClient(context.Background(), "10.1.0.1")
				refused = append(refused, refusal(s.RequestPasswordReset(ctx, addr)))
				// Another spelling of the address is the same address.
				if err := s.RequestPasswordReset(ctx, " "+strings.ToUpper(addr)); !store.IsKind(err, store.KindRateLimited) {
					t.Errorf("%s in capitals: %v, want RATE_LIMITED", addr, err)
				}
			}
			if refused[0] != refused[1] || !strings.HasPrefix(refused[0], "RATE_LIMITED") {
				t.Errorf("refusals differ for a known and an unknown address:\n%s\n%s", refused[0], refused[1])
			}
			if err := s.RequestPasswordReset(context.Background(), "other@example.org"); err != nil {
				t.Errorf("another address: %v", err)
			}
			clk.Add(time.Hour + time.Second)
			if err := s.RequestPasswordReset(context.Background(), "ann@example.org"); err != nil {
				t.Errorf("after the window: %v", err)
			}
		})

		t.Run("per client", func(t *testing.T) {
			s, _ := newStore(1000)
			ctx := store.WithClient(context.Background(), "10.2.0.1")
			for i := range perClient {
				addr := fmt.Sprintf("someone%d@example.org", i)
				if i == 0 {
					addr = "ann@example.org"
				}
				if err := s.RequestPasswordReset(ctx, addr); err != nil {
					t.Fatalf("request %d: %v", i+1, err)
				}
			}
			known, unknown := s.RequestPasswordReset(ctx, "ann@example.org"), s.RequestPasswordReset(ctx, "fresh@example.org")
			if refusal(known) != refusal(unknown) || !store.IsKind(unknown, store.KindRateLimited) {
				t.Errorf("past the client's limit: known %v, unknown %v; want the same RATE_LIMITED", known, unknown)
			}
			if err := s.RequestPasswordReset(store.WithClient(context.Background(), "10.2.0.2"), "fresh@example.org"); err != nil {
				t.Errorf("another client: %v", err)
			}
		})

		t.Run("off", func(t *testing.T) {
			s, _ := newStore(-1)
			ctx := store.WithClient(context.Background(), "10.3.0.1")
			for i := range 2 * (perEmail + perClient) {
				for _, addr := range []string{"ann@example.org", "nobody@example.org"} {
					if err := s.RequestPasswordReset(ctx, addr); err != nil {
						t.Fatalf("%s, request %d with WriteLimit -1: %v", addr, i+1, err)
					}
				}
			}
		})
	})
}

// TestSetEmailLimited: setEmail mails a verification link to any address it is given, so it
// counts against the write limit like every write: past the limit it is refused with
// RATE_LIMITED before it claims the address, sets it or queues a mail.
func TestSetEmailLimited(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		const limit = 3
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Prefix: storetest.Prefix(), WriteLimit: limit, WriteWindow: time.Hour})
		for _, name := range []string{"ann", "bob"} {
			if _, err := s.SignUp(ctx, name, "password1"); err != nil {
				t.Fatal(err)
			}
		}
		for i := range limit {
			if _, err := s.SetEmail(ctx, "ann", fmt.Sprintf("ann%d@example.org", i), "password1"); err != nil {
				t.Fatalf("setEmail %d: %v", i+1, err)
			}
		}
		if _, err := s.SetEmail(ctx, "ann", "victim@example.org", "password1"); !store.IsKind(err, store.KindRateLimited) {
			t.Fatalf("setEmail past the write limit: %v, want RATE_LIMITED", err)
		}
		if addr, _, err := s.Email(ctx, "ann"); err != nil || addr != fmt.Sprintf("ann%d@example.org", limit-1) {
			t.Errorf("ann's address after the refusal: %q, %v; want the last one set", addr, err)
		}
		if _, err := s.SetEmail(ctx, "bob", "victim@example.org", "password1"); err != nil {
			t.Errorf("the refused address, for another account: %v", err)
		}
	})
}

// commandLog records the commands sent while on: each command's name,
// with the script's digest for EVALSHA, in the order sent.
type commandLog struct {
	mu   sync.Mutex
	on   bool
	cmds []string
}

// record records cmds, when on.
func (l *commandLog) record(cmds []rdb.Cmder) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.on {
		return
	}
	for _, c := range cmds {
		name := c.Name()
		if args := c.Args(); (name == "evalsha" || name == "eval") && len(args) > 1 {
			name += " " + fmt.Sprint(args[1])
		}
		l.cmds = append(l.cmds, name)
	}
}

// during returns the commands f sends.
func (l *commandLog) during(f func()) []string {
	l.mu.Lock()
	l.on, l.cmds = true, nil
	l.mu.Unlock()
	f()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on = false
	return l.cmds
}

// TestPasswordResetSameWork: requestPasswordReset does the same work for an address that has an
// account and one that has none — the same Redis commands, scripts and round trips in the same
// order, the rate limits' among them, and one job queued — so that neither its answer nor its time tells them apart. (Timed
// assertions are not allowed: this compares the work itself.)
func TestPasswordResetSameWork(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := store.WithClient(context.Background(), "10.4.0.1")
		clk := storetest.NewClock()
		s := b.NewStore(t, store.Options{Prefix: storetest.Prefix(), Now: clk.Now, WriteLimit: 1000})
		for _, name := range []string{"ann", "bob"} {
			if _, err := s.SignUp(ctx, name, "password1"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SetEmail(ctx, store.UserKey(name), name+"@example.org", "password1"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Jobs().RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		log := &commandLog{}
		b.Client.AddHook(storetest.Before(log.record))
		work := func(addr string) ([]string, int) {
			t.Helper()
			before, err := s.Jobs().Census(ctx)
			if err != nil {
				t.Fatal(err)
			}
			cmds := log.during(func() {
				if err := s.RequestPasswordReset(ctx, addr); err != nil {
					t.Fatalf("%s: %v", addr, err)
				}
			})
			after, err := s.Jobs().Census(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return cmds, after.Due - before.Due
		}
		// Warm both paths first: the first run of a script may load it (NOSCRIPT, then EVAL).
		work("bob@example.org")
		work("nobody@example.org")
		known, knownJobs := work("ann@example.org")
		unknown, unknownJobs := work("someone@example.org")
		if len(known) == 0 || !slices.Equal(known, unknown) {
			t.Errorf("the work differs:\nknown   %q\nunknown %q", known, unknown)
		}
		if knownJobs != 1 || unknownJobs != 1 {
			t.Errorf("jobs queued: known %d, unknown %d; want one each", knownJobs, unknownJobs)
		}
	})
}

// TestVerificationMailsPerAddress: each setEmail mails a link to the address it is given, so the
// links one address receives are limited as its reset links are (5 an hour), whatever the
// accounts and however high the write limit: an account setting the same address again and
// again cannot bomb its owner with mails. Another address is not held back.
func TestVerificationMailsPerAddress(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s := b.NewStore(t, store.Options{Prefix: storetest.Prefix(), WriteLimit: 1000})
		if _, err := s.SignUp(ctx, "ann", "password1"); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if _, err := s.SetEmail(ctx, "ann", "Victim@example.org", "password1"); err != nil {
				t.Fatalf("setEmail %d: %v", i+1, err)
			}
		}
		before, err := s.Jobs().Census(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetEmail(ctx, "ann", "victim@example.ORG", "password1"); !store.IsKind(err, store.KindRateLimited) {
			t.Errorf("a sixth link to one address within the hour: %v, want RATE_LIMITED", err)
		}
		after, err := s.Jobs().Census(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if after.Due != before.Due {
			t.Errorf("the refused setEmail queued a mail: %+v, then %+v", before, after)
		}
		if _, err := s.SetEmail(ctx, "ann", "ann@example.org", "password1"); err != nil {
			t.Errorf("another address: %v", err)
		}
	})
}

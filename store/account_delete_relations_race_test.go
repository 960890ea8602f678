package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestRelationsAcrossTheirUsersDeletionLeaveNoName: a follow, a join, a watch or a group's
// creation whose checks passed just before an account it names was deleted, and whose script
// landed after the deletion's chain had walked that account's follows, groups, watch modes and
// the groups' moderators, left the deleted account's name in another user's followers or
// following, a group's members (and their count), a thread's or a group's watchers, or a group's
// moderators, for good: nothing walks them again. Each write now reads the deletion where it
// records itself in the account's own slot, takes the name off as the chain does, and answers
// as a write after the deletion does: UNAUTHENTICATED for the writer's account, NOT_FOUND for the
// account followed.
func TestRelationsAcrossTheirUsersDeletionLeaveNoName(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		d := newAcrossDeletion(t, b)
		prefix := d.prefix
		s := d.s
		p, pid := ownersPostInBirds(t, s)
		// none reads a key that must hold no member of the deleted account's name.
		none := func(key, member string) func(t *testing.T) {
			return func(t *testing.T) {
				t.Helper()
				var err error
				if strings.HasSuffix(key, ":all") {
					var in bool
					in, err = b.Client.SIsMember(ctx, prefix+key, member).Result()
					if err == nil && in {
						t.Errorf("%s holds %s", key, member)
					}
					return
				}
				switch {
				case strings.HasSuffix(key, ":watch"):
					err = b.Client.HGet(ctx, prefix+key, member).Err()
				default:
					err = b.Client.ZScore(ctx, prefix+key, member).Err()
				}
				if !errors.Is(err, rdb.Nil) {
					t.Errorf("%s holds %s (%v)", key, member, err)
				}
			}
		}
		// count checks a count the deleted account's name must not be in.
		count := func(what string, n func(l *store.Loader) (int, error)) func(t *testing.T) {
			return func(t *testing.T) {
				t.Helper()
				if got, err := n(s.NewLoader()); err != nil || got != 0 {
					t.Errorf("%s: %d, %v; want 0", what, got, err)
				}
			}
		}
		owner := &store.User{ID: store.TypeUser + ":owner", Name: "owner"}
		for _, tc := range []struct {
			name string
			// deleted is the account deleted, with its whole chain, right before the first script
			// that writes key (of the account's slot, or of the group's for a creation): the
			// write's script after its checks.
			deleted, key string
			write        func() error
			want         store.Kind
			// left are the records that must not name the deleted account once the write is done.
			left []func(t *testing.T)
		}{
			{
				name: "follow across the follower's deletion", deleted: "ann", key: "{u:ann}:following",
				write: func() error { _, err := s.Follow(ctx, "ann", "owner"); return err },
				want:  store.KindUnauthenticated,
				left: []func(t *testing.T){none("{u:owner}:followers", "ann"), none("{u:ann}:following", "owner"),
					count("owner's followers", func(l *store.Loader) (int, error) { return l.FollowerCount(ctx, owner) })},
			},
			{
				name: "follow across the followee's deletion", deleted: "bob", key: "{u:owner}:following",
				write: func() error { _, err := s.Follow(ctx, "owner", "bob"); return err },
				want:  store.KindNotFound,
				left: []func(t *testing.T){none("{u:owner}:following", "bob"), none("{u:bob}:followers", "owner"),
					count("owner's following", func(l *store.Loader) (int, error) { return l.FollowingCount(ctx, owner) })},
			},
			{
				name: "join across the member's deletion", deleted: "cat", key: "{u:cat}:groups",
				write: func() error { _, err := s.JoinGroup(ctx, "cat", "birds"); return err },
				want:  store.KindUnauthenticated,
				left: []func(t *testing.T){none("{g:birds}:members", "cat"), none("{u:cat}:groups", "birds"),
					count("birds' members", func(l *store.Loader) (int, error) { return l.GroupMemberCount(ctx, store.NewGroup("birds")) })},
			},
			{
				name: "thread watch across the watcher's deletion", deleted: "dan", key: "{u:dan}:watches",
				write: func() error { return s.WatchPost(ctx, "dan", p.ID, store.WatchAll) },
				want:  store.KindUnauthenticated,
				left: []func(t *testing.T){none("{p:"+pid+"}:watch", "dan"), none("{p:"+pid+"}:watch:all", "dan"),
					none("{u:dan}:watches", "p:"+pid)},
			},
			{
				name: "group watch across the watcher's deletion", deleted: "eve", key: "{u:eve}:watches",
				write: func() error { return s.WatchGroup(ctx, "eve", "birds", store.WatchMuted) },
				want:  store.KindUnauthenticated,
				left:  []func(t *testing.T){none("{g:birds}:watch", "eve"), none("{u:eve}:watches", "g:birds")},
			},
			{
				name: "group created across its creator's deletion", deleted: "fay", key: "{g:herons}:mods",
				write: func() error { _, err := s.CreateGroup(ctx, "fay", "herons", nil); return err },
				want:  store.KindUnauthenticated,
				left:  []func(t *testing.T){none("{g:herons}:mods", "fay")},
			},
		} {
			t.Run(tc.name, func(t *testing.T) {
				signUp(t, s, tc.deleted)
				d.arm(t, tc.deleted, false, argIs(prefix+tc.key))
				if err := tc.write(); !store.IsKind(err, tc.want) {
					t.Errorf("%s: %v, want kind %v", tc.name, err, tc.want)
				}
				settle(t, s)
				d.deleted(t, tc.deleted)
				for _, check := range tc.left {
					check(t)
				}
			})
		}
	})
}

// TestDeletionReadFollowsAScriptSentAgain: the read of an account's deletion that rides after a
// write's script in its slot (authorGone) proves that the script landed before the deletion only
// when it runs after the script. A script that Redis answered NOSCRIPT (its script cache lost in
// a restart or failover, or its slot moved to a node that never loaded the scripts), or that a
// slot on the move redirected, is sent again alone once the scripts are loaded, while the read,
// answered the first time, was not: a deletion and its chain landing in between left the deleted
// account's name in another user's followers or a group's members, or a watch index its chain had
// dropped, and the write was answered as a success. The read is now sent again after a script
// that was.
func TestDeletionReadFollowsAScriptSentAgain(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		opts := store.Options{Prefix: prefix, WriteLimit: 1000, NewAccount: store.NewAccountLimits{Age: -1}}
		// lost, when set, answers NOSCRIPT, unsent, the first script whose arguments name it once
		// pass such scripts have gone through, and sends the rest of its pipeline; then runs
		// then, before the script is sent again.
		var mu sync.Mutex
		var lost string
		var pass int
		var then func()
		hooked := b.Hooked(t, storetest.OnEach(func(ctx context.Context, cmds []rdb.Cmder, next rdb.ProcessPipelineHook) error {
			mu.Lock()
			var hit, rest []rdb.Cmder
			for _, c := range cmds {
				if lost != "" && len(hit) == 0 && isScript(c) && slices.ContainsFunc(c.Args(), func(a any) bool { return storetest.ArgString(a) == lost }) {
					if pass == 0 {
						hit = append(hit, c)
						continue
					}
					pass--
				}
				rest = append(rest, c)
			}
			f := then
			if len(hit) > 0 {
				lost, then = "", nil
			}
			mu.Unlock()
			if len(hit) == 0 {
				return next(ctx, cmds)
			}
			_ = storetest.Fail(hit, errors.New("NOSCRIPT No matching script. Please use EVAL."))
			var err error
			if len(rest) > 0 {
				err = next(ctx, rest)
			}
			f()
			return err
		}))
		s := hooked.NewStore(t, opts)
		other := b.NewStore(t, opts) // the deletion's client, which the hook leaves alone
		p, pid := ownersPostInBirds(t, s)
		for _, tc := range []struct {
			name, deleted, key string // key: of the deleted account's slot, which the script writes
			pass               int    // the scripts naming key that go through first
			write              func() error
			left, member       string // a key that must not hold the deleted account's name
		}{
			{name: "follow", deleted: "ann", key: "{u:ann}:following",
				write: func() error { _, err := s.Follow(ctx, "ann", "owner"); return err },
				left:  "{u:owner}:followers", member: "ann"},
			{name: "join", deleted: "cat", key: "{u:cat}:groups",
				write: func() error { _, err := s.JoinGroup(ctx, "cat", "birds"); return err },
				left:  "{g:birds}:members", member: "cat"},
			// A watch records its entry twice: the read rides in the second, after the mode.
			{name: "watch", deleted: "dan", key: "{u:dan}:watches", pass: 1,
				write: func() error { return s.WatchPost(ctx, "dan", p.ID, store.WatchAll) },
				left:  "{u:dan}:watches", member: "p:" + pid},
		} {
			t.Run(tc.name, func(t *testing.T) {
				signUp(t, s, tc.deleted)
				ran := false
				mu.Lock()
				lost, pass = prefix+tc.key, tc.pass
				then = func() {
					ran = true
					if err := other.DeleteAccount(ctx, store.UserKey(tc.deleted), "password1", false); err != nil {
						t.Errorf("delete %s: %v", tc.deleted, err)
					}
					settle(t, other) // the deletion's whole chain
				}
				mu.Unlock()
				err := tc.write()
				if !ran {
					t.Fatal("the hook did not lose the write's script")
				}
				if !store.IsKind(err, store.KindUnauthenticated) {
					t.Errorf("%v, want UNAUTHENTICATED", err)
				}
				settle(t, s)
				if b.Client.ZScore(ctx, prefix+tc.left, tc.member).Err() == nil {
					t.Errorf("%s holds %s, whose account was deleted", tc.left, tc.member)
				}
			})
		}
	})
}

// ownersPostInBirds signs owner up, makes the group birds and posts in it as owner: what the
// races across a deletion act on. It returns the post and its key.
func ownersPostInBirds(t *testing.T, s *store.Store) (*store.Post, string) {
	t.Helper()
	ctx := context.Background()
	signUp(t, s, "owner")
	if _, err := s.CreateGroup(ctx, "owner", "birds", nil); err != nil {
		t.Fatal(err)
	}
	p, err := s.CreatePost(ctx, "owner", store.NewPost{Title: "owner's", Body: "a post", Groups: []string{"birds"}})
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := store.PostKey(p.ID)
	return p, pid
}

package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestRebuildDropsADeletedAccountsRelations: data restored from a backup taken in the middle of
// a deletion — after its step, before its chain went through the account's follows, groups and
// watch modes, the chain's jobs lost — still names the deleted account in another user's
// followers and following, a group's members and a thread's and a group's watchers. `agora
// rebuild` kept all of it: RebuildUsers mirrored the live side's relations with a deleted account
// (and kept a deleted follower whose following set named the user), dropStaleMembers kept a
// deleted member whose groups set named the group, and the watch index's rebuild indexed the
// deleted watcher again. Each rebuild now takes a relation naming a deleted account off both
// sides, as the chain does, its counts with it.
func TestRebuildDropsADeletedAccountsRelations(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, WriteLimit: -1, NewAccount: store.NewAccountLimits{Age: -1}})
		signUp(t, s, "ann", "bob")
		if _, err := s.CreateGroup(ctx, "bob", "birds", nil); err != nil {
			t.Fatal(err)
		}
		p, err := s.CreatePost(ctx, "bob", store.NewPost{Title: "bob's", Body: "a post", Groups: []string{"birds"}})
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := store.PostKey(p.ID)
		members, err := s.NewLoader().GroupMemberCount(ctx, store.NewGroup("birds")) // before ann joins
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []func() error{
			func() error { _, err := s.Follow(ctx, "ann", "bob"); return err },
			func() error { _, err := s.Follow(ctx, "bob", "ann"); return err },
			func() error { _, err := s.JoinGroup(ctx, "ann", "birds"); return err },
			func() error { return s.WatchPost(ctx, "ann", p.ID, store.WatchAll) },
			func() error { return s.WatchGroup(ctx, "ann", "birds", store.WatchAll) },
		} {
			if err := w(); err != nil {
				t.Fatal(err)
			}
		}
		settle(t, s)
		if err := s.DeleteAccount(ctx, "ann", "password1", false); err != nil {
			t.Fatal(err)
		}
		// The backup, taken now: every key but the job engine's (the chain is lost with it).
		backup := takeBackup(t, b, prefix)
		settle(t, s) // the chain, whose work the restore undoes
		backup.restore(t, b)
		if err := b.Client.ZScore(ctx, prefix+"{u:bob}:followers", "ann").Err(); err != nil {
			t.Fatalf("the restore holds no follow of the deleted account's: %v", err)
		}
		if _, err := s.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RebuildUsers(ctx); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ key, member string }{
			{"{u:bob}:followers", "ann"}, {"{u:bob}:following", "ann"}, {"{g:birds}:members", "ann"},
			{"{u:ann}:following", "bob"}, {"{u:ann}:followers", "bob"}, {"{u:ann}:groups", "birds"},
			{"{p:" + pid + "}:watch", "ann"}, {"{g:birds}:watch", "ann"}, {"{p:" + pid + "}:watch:all", "ann"},
			{"{u:ann}:watches", "p:" + pid},
		} {
			var err error
			switch {
			case strings.HasSuffix(c.key, ":all"):
				var in bool
				if in, err = b.Client.SIsMember(ctx, prefix+c.key, c.member).Result(); err == nil && in {
					err = nil
					t.Errorf("after the rebuild %s holds %s", c.key, c.member)
				}
				continue
			case strings.HasSuffix(c.key, ":watch"):
				err = b.Client.HGet(ctx, prefix+c.key, c.member).Err()
			default:
				err = b.Client.ZScore(ctx, prefix+c.key, c.member).Err()
			}
			if !errors.Is(err, rdb.Nil) {
				t.Errorf("after the rebuild %s holds %s (%v)", c.key, c.member, err)
			}
		}
		bob := &store.User{ID: store.TypeUser + ":bob", Name: "bob"}
		l := s.NewLoader()
		for _, c := range []struct {
			what string
			n    func() (int, error)
			want int
		}{
			{"bob's followers", func() (int, error) { return l.FollowerCount(ctx, bob) }, 0},
			{"bob's following", func() (int, error) { return l.FollowingCount(ctx, bob) }, 0},
			{"birds' members", func() (int, error) { return l.GroupMemberCount(ctx, store.NewGroup("birds")) }, members},
		} {
			if got, err := c.n(); err != nil || got != c.want {
				t.Errorf("%s after the rebuild: %d, %v; want %d", c.what, got, err, c.want)
			}
		}
	})
}

// backup is a copy of a test's keys, each as the commands that write it again: a backup of the
// database that every backend can take and restore (miniredis's DUMP holds strings only). The
// job engine's keys and the live events' streams are left out.
type backup map[string]func(ctx context.Context, c rdb.Cmdable) error

// takeBackup copies every key of prefix but the job engine's.
func takeBackup(t *testing.T, b storetest.Backend, prefix string) backup {
	t.Helper()
	ctx := context.Background()
	out := backup{}
	for _, k := range allKeys(t, b, prefix+"*") {
		if strings.HasPrefix(k, prefix+"{j:") {
			continue
		}
		typ, err := b.Client.Type(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		switch typ {
		case "string":
			v, err := b.Client.Get(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			out[k] = func(ctx context.Context, c rdb.Cmdable) error { return c.Set(ctx, k, v, 0).Err() }
		case "hash":
			v, err := b.Client.HGetAll(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			out[k] = func(ctx context.Context, c rdb.Cmdable) error { return c.HSet(ctx, k, v).Err() }
		case "zset":
			v, err := b.Client.ZRangeWithScores(ctx, k, 0, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			out[k] = func(ctx context.Context, c rdb.Cmdable) error { return c.ZAdd(ctx, k, v...).Err() }
		case "set":
			v, err := b.Client.SMembers(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			out[k] = func(ctx context.Context, c rdb.Cmdable) error { return c.SAdd(ctx, k, v).Err() }
		case "list":
			v, err := b.Client.LRange(ctx, k, 0, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			out[k] = func(ctx context.Context, c rdb.Cmdable) error { return c.RPush(ctx, k, v).Err() }
		}
	}
	return out
}

// restore writes every key of the backup back as it was, over what the key holds now.
func (bk backup) restore(t *testing.T, b storetest.Backend) {
	t.Helper()
	ctx := context.Background()
	for k, write := range bk {
		if err := b.Client.Del(ctx, k).Err(); err != nil {
			t.Fatal(err)
		}
		if err := write(ctx, b.Client); err != nil {
			t.Fatalf("restore %s: %v", k, err)
		}
	}
}

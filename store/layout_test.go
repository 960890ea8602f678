package store_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// deleteMatching deletes, one at a time (each on its own slot), every key matching pattern.
func deleteMatching(t *testing.T, c rdb.UniversalClient, pattern string) {
	t.Helper()
	for _, k := range matchingKeys(t, c, pattern) {
		if err := c.Del(context.Background(), k).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// matchingKeys returns the keys that match pattern, on every master of a cluster.
func matchingKeys(t *testing.T, c rdb.UniversalClient, pattern string) []string {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	var found []string
	scan := func(ctx context.Context, n rdb.Cmdable) error {
		iter := n.Scan(ctx, 0, pattern, 500).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			found = append(found, iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	}
	var err error
	if cc, ok := c.(*rdb.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, n *rdb.Client) error { return scan(ctx, n) })
	} else {
		err = scan(ctx, c)
	}
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestLayoutFreshKeyspace: an empty keyspace is layout 0 until checked, then starts at the
// current layout with nothing to migrate.
func TestLayoutFreshKeyspace(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		s, ctx := b.NewStore(t, store.Options{}), context.Background()
		l, err := s.ReadLayout(ctx)
		if err != nil || l.Version != 0 || l.Recorded || len(l.Pending()) != 0 {
			t.Fatalf("fresh keyspace: %+v, %v; want version 0, nothing pending", l, err)
		}
		if l, err = s.CheckLayout(ctx); err != nil || l.Version != store.Layout || !l.Recorded {
			t.Fatalf("checked: %+v, %v; want layout %d recorded", l, err, store.Layout)
		}
		ran, err := s.Migrate(ctx, 10*time.Millisecond)
		if err != nil || len(ran) != 0 {
			t.Fatalf("migrate a fresh keyspace: ran %d, %v", len(ran), err)
		}
	})
}

// TestLayoutTooNew: a keyspace of a layout newer than the binary's is refused, and not changed.
func TestLayoutTooNew(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix, ctx := storetest.Prefix(), context.Background()
		s := b.NewStore(t, store.Options{Prefix: prefix})
		newer := strconv.Itoa(store.Layout + 1)
		if err := b.Client.HSet(ctx, prefix+"{meta}:layout", "version", newer).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CheckLayout(ctx); !errors.Is(err, store.ErrLayoutTooNew) {
			t.Fatalf("CheckLayout: %v, want ErrLayoutTooNew", err)
		}
		if _, err := s.Migrate(ctx, 10*time.Millisecond); !errors.Is(err, store.ErrLayoutTooNew) {
			t.Fatalf("Migrate: %v, want ErrLayoutTooNew", err)
		}
		if v, _ := b.Client.HGet(ctx, prefix+"{meta}:layout", "version").Result(); v != newer {
			t.Fatalf("version after the refusals: %q, want %s", v, newer)
		}
	})
}

// TestMigrateOldLayout writes data as the previous release left it — no version hash, and none
// of what it did not keep: the search index, the users' comment lists — and migrates it to the
// current layout, twice (the second run does nothing), then once more after a migration cut off
// half-way (marked in progress, its lock's lease over), which is resumed.
func TestMigrateOldLayout(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		f := newFixture(t, b, store.Options{Prefix: prefix, WriteLimit: -1})
		ann := f.user("ann")
		p := f.postBody(ann, "Quokka migration notes", "the previous release kept no index", "zoo")
		if _, err := f.s.CreateComment(f.ctx, uk(ann), store.NewComment{PostID: p.ID, Body: "a comment"}); err != nil {
			t.Fatal(err)
		}
		// What the previous release did not write.
		deleteMatching(t, b.Client, prefix+"{sx:*")
		deleteMatching(t, b.Client, prefix+"{u:"+string(uk(ann))+"}:comments*")
		derived := func() (comments int, found []string) {
			t.Helper()
			n, err := f.s.NewLoader().UserCommentCount(f.ctx, uk(ann))
			if err != nil {
				t.Fatal(err)
			}
			return n, f.search("", store.PostSearch{Query: "quokka"}, 10)
		}
		if n, found := derived(); n != 0 || len(found) != 0 {
			t.Fatalf("before the migration: %d comments listed, search %q; want the previous release's nothing", n, found)
		}
		check := func(when string, wantRan int) {
			t.Helper()
			ran, err := f.s.Migrate(f.ctx, 10*time.Millisecond)
			if err != nil || len(ran) != wantRan {
				t.Fatalf("%s: ran %d migrations, %v; want %d", when, len(ran), err, wantRan)
			}
			l, err := f.s.ReadLayout(f.ctx)
			if err != nil || l.Version != store.Layout || l.Migrating != 0 || l.Finished.IsZero() {
				t.Fatalf("%s: layout %+v, %v; want %d, finished", when, l, err, store.Layout)
			}
			if n, found := derived(); n != 1 || len(found) != 1 || found[0] != "Quokka migration notes" {
				t.Fatalf("%s: %d comments listed, search %q; want 1 and the post", when, n, found)
			}
		}
		l, err := f.s.ReadLayout(f.ctx)
		if err != nil || l.Version != 1 || l.Recorded || len(l.Pending()) != store.Layout-1 {
			t.Fatalf("previous release's data: %+v, %v; want layout 1, not recorded, %d pending", l, err, store.Layout-1)
		}
		check("first migration", store.Layout-1)
		check("second run", 0)

		// A migration cut off: the version hash says it is in progress, the derived data is
		// half gone, the process that held the lock is dead and its lease over.
		if err := b.Client.HSet(f.ctx, prefix+"{meta}:layout", "version", 1, "migrating", 2).Err(); err != nil {
			t.Fatal(err)
		}
		deleteMatching(t, b.Client, prefix+"{sx:*")
		check("resumed", store.Layout-1)
	})
}

package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestMigrateOnReplicas starts the migration of a keyspace of the first layout from three
// processes at once (each a store with a client of its own) while a fourth serves reads: every
// migration runs once, in one process at a time, all three return once the keyspace is at Layout,
// and the reads never fail meanwhile.
func TestMigrateOnReplicas(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		opts := store.Options{Prefix: prefix, WriteLimit: -1}
		f := newFixture(t, b, opts)
		ann := f.user("ann")
		p := f.postBody(ann, "Quokka replicas", "three processes start at once", "zoo")
		if _, err := f.s.CreateComment(f.ctx, uk(ann), store.NewComment{PostID: p.ID, Body: "a comment"}); err != nil {
			t.Fatal(err)
		}
		// A keyspace of the first layout: no version recorded, nothing the later layouts derive.
		deleteMatching(t, b.Client, prefix+"{sx:*")
		deleteMatching(t, b.Client, prefix+"{u:"+string(uk(ann))+"}:comments*")
		deleteMatching(t, b.Client, prefix+"{meta}:layout")
		l, err := f.s.ReadLayout(f.ctx)
		if err != nil || l.Version != 1 || len(l.Pending()) != store.Layout-1 {
			t.Fatalf("before: %+v, %v; want layout 1 with %d migrations pending", l, err, store.Layout-1)
		}
		replica := func() *store.Store {
			other := b
			other.Client = b.NewClient(t)
			return other.NewStore(t, opts)
		}
		ctx, cancel := context.WithTimeout(f.ctx, time.Minute)
		defer cancel()

		// The reader serves while the others migrate.
		reader := replica()
		stop := make(chan struct{})
		readErrs := make(chan error, 1)
		go func() {
			defer close(readErrs)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := reader.NewLoader().Post(ctx, p.ID); err != nil {
					readErrs <- err
					return
				}
			}
		}()

		var wg sync.WaitGroup
		ran := make([][]store.Migration, 3)
		errs := make([]error, 3)
		for i := range ran {
			s := replica()
			wg.Go(func() { ran[i], errs[i] = s.Migrate(ctx, 5*time.Millisecond) })
		}
		wg.Wait()
		close(stop)
		if err := <-readErrs; err != nil {
			t.Errorf("a read during the migration: %v", err)
		}
		seen := map[int]int{}
		for i := range ran {
			if errs[i] != nil {
				t.Errorf("process %d: %v", i, errs[i])
			}
			for _, m := range ran[i] {
				seen[m.From]++
			}
		}
		if len(seen) != store.Layout-1 {
			t.Errorf("migrations run: %v; want each of the %d once", seen, store.Layout-1)
		}
		for from, n := range seen {
			if n != 1 {
				t.Errorf("the migration from %d ran %d times", from, n)
			}
		}
		if l, err := f.s.ReadLayout(f.ctx); err != nil || l.Version != store.Layout || l.Migrating != 0 {
			t.Errorf("after: %+v, %v; want layout %d, none in progress", l, err, store.Layout)
		}
		if n, err := f.s.NewLoader().UserCommentCount(f.ctx, uk(ann)); err != nil || n != 1 {
			t.Errorf("the user's comments after the migration: %d, %v; want 1", n, err)
		}
		if found := f.search("", store.PostSearch{Query: "quokka"}, 10); len(found) != 1 {
			t.Errorf("search after the migration: %q; want the post", found)
		}
	})
}

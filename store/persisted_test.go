package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestPersistedQueriesKeepABoundedNumber: a shard keeps PersistedQueryCap/16 documents, dropping
// the least recently used, so that no client can fill Redis with them.
func TestPersistedQueriesKeepABoundedNumber(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		clk := storetest.NewClock()
		s := b.NewStore(t, store.Options{Now: clk.Now})
		perShard := store.PersistedQueryCap / 16
		var docs []string // documents of the shard of hashes starting with "0"
		for i := 0; len(docs) < perShard+1; i++ {
			q := fmt.Sprintf("{ a%d: __typename }", i)
			if store.QueryHash(q)[0] == '0' {
				docs = append(docs, q)
			}
		}
		for i, q := range docs[:perShard] {
			clk.Add(time.Millisecond)
			if kept, err := s.PersistQuery(ctx, store.QueryHash(q), q); err != nil || !kept {
				t.Fatalf("document %d: %v %v", i, kept, err)
			}
		}
		// The first is used again; the second is now the least recently used.
		clk.Add(time.Millisecond)
		if got, err := s.PersistedQuery(ctx, store.QueryHash(docs[0])); err != nil || got != docs[0] {
			t.Fatalf("read the first document: %q %v", got, err)
		}
		clk.Add(time.Millisecond)
		if _, err := s.PersistQuery(ctx, store.QueryHash(docs[perShard]), docs[perShard]); err != nil {
			t.Fatal(err)
		}
		for i, want := range map[int]bool{0: true, 1: false, 2: true, perShard: true} {
			got, err := s.PersistedQuery(ctx, store.QueryHash(docs[i]))
			if err != nil || (got != "") != want {
				t.Errorf("document %d kept: %v (%v), want %v", i, got != "", err, want)
			}
		}
		if _, err := s.PersistQuery(ctx, store.QueryHash("{ b }"), "{ c }"); !store.IsKind(err, store.KindInvalid) {
			t.Errorf("a hash of another document: %v", err)
		}
	})
}

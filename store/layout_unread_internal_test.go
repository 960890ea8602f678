package store

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/agora/agora/internal/rdb"
)

// TestUnreadPageIsTheSetsPage: the pages of an inbox's unread notifications (unread_page.lua)
// are the pages page.lua gives of a sorted set of the unread ids by creation time, as layout 6
// kept it — forwards and backwards, from every cursor (of an unread id, of a read one, of one no
// longer kept), between two cursors, with ties of creation time — both for an inbox of layout 7
// and for one still of layout 6.
func TestUnreadPageIsTheSetsPage(t *testing.T) {
	ctx := context.Background()
	s, c := newEssentialsStore(t)
	keys := []string{s.k.inboxNotes("ann"), s.k.inbox("ann"), s.k.legacyInboxUnread("ann"), s.k.inboxUnannounced("ann")}
	type entry struct {
		id string
		at int64
	}
	var all []entry
	for i := range 14 {
		e := entry{fmt.Sprintf("f:user%02d", i), 1000 + int64(i/3)} // three at a time share a creation time
		all = append(all, e)
		rec := noticeRecord{Kind: NotificationFollow, At: e.at, Actor: e.id[2:]}
		if _, err := s.run(ctx, "notify", keys, e.id, e.at, rec.pack(e.id), NotificationCap); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.run(ctx, "mark_read", []string{keys[0], keys[2]}, "ids", "f:user01", "f:user04", "f:user05", "f:user13"); err != nil {
		t.Fatal(err)
	}
	ref := "x:{n:ann}:ref" // the sorted set of layout 6, on the inbox's slot
	read := map[string]bool{"f:user01": true, "f:user04": true, "f:user05": true, "f:user13": true}
	for _, e := range all {
		if !read[e.id] {
			c.ZAdd(ctx, ref, rdb.Z{Score: float64(e.at), Member: e.id})
		}
	}
	var cursors []cursor
	for _, e := range all {
		cursors = append(cursors, cursor{list: inboxUnreadTag, score: formatScore(float64(e.at)), member: e.id})
	}
	cursors = append(cursors, cursor{list: inboxUnreadTag, score: "1002", member: "f:user07x"}, // never kept, among ties
		cursor{list: inboxUnreadTag, score: "1003", member: "f:user07"}, // kept, another score
		cursor{list: inboxUnreadTag, score: "999", member: "f:a"}, cursor{list: inboxUnreadTag, score: "2000", member: "f:z"})
	var spans []span
	for _, n := range []int{1, 2, 5, 20} {
		for _, back := range []bool{false, true} {
			spans = append(spans, span{n: n, backward: back})
			for i, cu := range cursors {
				sp := span{n: n, backward: back}
				if back {
					sp.before = cu
				} else {
					sp.after = cu
				}
				spans = append(spans, sp)
				if j := (i + 5) % len(cursors); i%3 == 0 { // between two cursors
					sp.after, sp.before = cu, cursors[j]
					spans = append(spans, sp)
				}
			}
		}
	}
	same := func(shape string) {
		t.Helper()
		for _, sp := range spans {
			l := s.NewLoader()
			want, err := l.page(ctx, ref, true, sp)
			if err != nil {
				t.Fatal(err)
			}
			cl, err := l.get(ctx, l.unreadPageRead("ann", sp))
			if err != nil {
				t.Fatal(err)
			}
			got, err := pageOf(cl, sp)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: span %+v:\n got %+v\nwant %+v", shape, sp, got, want)
			}
		}
	}
	same("layout 7")
	if n, err := s.UnreadAsLayout6(ctx, "ann"); err != nil || n != 10 {
		t.Fatalf("as layout 6: %d unread, %v", n, err)
	}
	same("layout 6")
	if n, err := s.foldInboxes(ctx); err != nil || n != 10 {
		t.Fatalf("folded %d, %v; want 10", n, err)
	}
	same("folded")
}

// TestUnreadCountExactUnderConcurrency runs notify.lua (into an inbox of 20, so that it trims,
// unread notifications among those trimmed) and mark_read.lua (some ids, or all) from many
// goroutines at once, as concurrent jobs and requests do: every reply of mark_read is a count
// between 0 and 20, and at the end the count is the number of records that say they are unread,
// the records are the inbox's ids, and every write raised the revision.
func TestUnreadCountExactUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	s, c := newEssentialsStore(t)
	const capacity, writers, each = 20, 4, 60
	keys := []string{s.k.inboxNotes("ann"), s.k.inbox("ann"), s.k.legacyInboxUnread("ann"), s.k.inboxUnannounced("ann")}
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("f:u%d_%03d", g, i)
				at := int64(1000 + i*writers + g)
				rec := noticeRecord{Kind: NotificationFollow, At: at, Actor: id[2:]}
				if _, err := s.run(ctx, "notify", keys, id, at, rec.pack(id), capacity); err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			for i := range each {
				args := []any{"ids", fmt.Sprintf("f:u%d_%03d", (g+1)%writers, i), fmt.Sprintf("f:u%d_%03d", g, i-1)}
				if i%17 == 0 {
					args = []any{"all"}
				}
				v, err := s.run(ctx, "mark_read", []string{keys[0], keys[2]}, args...)
				if err != nil {
					t.Error(err)
					return
				}
				if n, _ := v.(int64); n < 0 || n > capacity {
					t.Errorf("mark_read replied %v", v)
				}
			}
		})
	}
	wg.Wait()
	recs := c.HGetAll(ctx, keys[0]).Val()
	ids := c.ZRange(ctx, keys[1], 0, -1).Val()
	unread := 0
	for cause, raw := range recs {
		if cause == unreadField {
			continue
		}
		if !slices.Contains(ids, cause) {
			t.Errorf("record %s of no id kept", cause)
		}
		if rec, ok := unpackNotice(cause, raw); !ok {
			t.Errorf("unreadable record %s: %q", cause, raw)
		} else if rec.Unread {
			unread++
		}
	}
	if len(ids) != capacity || len(recs) != capacity+1 {
		t.Errorf("%d ids and %d hash fields, want %d and %d", len(ids), len(recs), capacity, capacity+1)
	}
	if got := recs[unreadField]; got != fmt.Sprint(unread) {
		t.Errorf("the unread count is %q, the records say %d", got, unread)
	}
	if n := c.Exists(ctx, keys[2]).Val(); n != 0 {
		t.Error("a set of unread ids was written")
	}
	if got := c.Get(ctx, s.k.revOf(keys[0])).Val(); got != fmt.Sprint(2*writers*each) {
		t.Errorf("revision %s after %d writes", got, 2*writers*each)
	}
}

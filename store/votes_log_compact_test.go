package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// exportedVotes decodes the votes of uid's export: item id → vote.
func exportedVotes(t *testing.T, s *store.Store, uid string) map[string]int {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Export(context.Background(), store.UserKey(uid), "", &buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Votes []struct {
			ItemID string `json:"itemId"`
			Vote   int    `json:"vote"`
		} `json:"votes"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("decode the export: %v", err)
	}
	got := map[string]int{}
	for _, v := range doc.Votes {
		if _, dup := got[v.ItemID]; dup {
			t.Fatalf("the export lists %s twice", v.ItemID)
		}
		got[v.ItemID] = v.Vote
	}
	return got
}

// TestVoteLogCompaction: a vote changed and withdrawn thousands of times grows the voter's log
// until the growth queues its compaction, which leaves each item once — and an item whose vote
// was withdrawn only while its voting is open, since a vote may be in flight; once closed it
// goes. Votes cast while compactions run are never lost from it, and the export is exact
// throughout. It logs the log's bytes before and after.
func TestVoteLogCompaction(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		clock := storetest.NewClock()
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: clock.Now, WriteLimit: -1})
		signUp(t, s, "ann", "bob")
		post := func(title string) *store.Post {
			t.Helper()
			p, err := s.CreatePost(ctx, "bob", store.NewPost{Title: title})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		p1, p2, p3 := post("kept"), post("churned"), post("withdrawn")
		c1, err := s.CreateComment(ctx, "bob", store.NewComment{PostID: p1.ID, Body: "a comment"})
		if err != nil {
			t.Fatal(err)
		}
		vote := func(id string, dir int) {
			t.Helper()
			var err error
			if strings.HasPrefix(id, store.TypeComment+":") {
				_, err = s.VoteComment(ctx, "ann", id, dir)
			} else {
				_, err = s.VotePost(ctx, "ann", id, dir)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		logKey := prefix + "{u:ann}:voted"
		vote(p1.ID, 1)
		vote(c1.ID, -1)
		vote(c1.ID, 1)
		vote(p3.ID, 1)
		vote(p3.ID, 0)
		for i := range 1600 { // up, withdrawn, up, …: ends withdrawn
			vote(p2.ID, 1-i%2)
		}
		before, err := b.Client.StrLen(ctx, logKey).Result()
		if err != nil {
			t.Fatal(err)
		}
		if before < 4096 {
			t.Fatalf("the log is %d bytes after 1605 votes; the test needs it past the threshold", before)
		}
		settle(t, s) // runs the compaction the growth queued
		after, err := b.Client.StrLen(ctx, logKey).Result()
		if err != nil {
			t.Fatal(err)
		}
		entry := func(id string) string {
			pid, num, err := store.CommentKey(id)
			if err == nil {
				return "c" + pid + ":" + strings.TrimLeft(num, "0")
			}
			pid, _ = store.PostKey(id)
			return "p" + pid
		}
		entries := func() []string {
			t.Helper()
			v, err := b.Client.Get(ctx, logKey).Result()
			if err != nil {
				t.Fatal(err)
			}
			return slices.Sorted(slices.Values(strings.Split(strings.TrimSuffix(v, ","), ",")))
		}
		want := slices.Sorted(slices.Values([]string{entry(p1.ID), entry(c1.ID), entry(p2.ID), entry(p3.ID)}))
		if got := entries(); !slices.Equal(got, want) {
			t.Fatalf("the compacted log holds %q, want %q (each item once; withdrawn ones still open)", got, want)
		}
		t.Logf("vote log of 1605 votes on 4 items: %d bytes before compaction, %d after", before, after)
		if got := exportedVotes(t, s, "ann"); len(got) != 2 || got[p1.ID] != 1 || got[c1.ID] != 1 {
			t.Fatalf("export after compaction: %v, want %s and %s up", got, p1.ID, c1.ID)
		}

		// Once the voting of p2 and p3 is long closed, their entries go: no vote can land there.
		clock.Add(7*24*time.Hour + 25*time.Hour) // the default voting window, then the slack
		if _, n, err := s.CompactVoted(ctx, "ann"); err != nil || n < 0 {
			t.Fatalf("compact: %d, %v", n, err)
		}
		want = slices.Sorted(slices.Values([]string{entry(p1.ID), entry(c1.ID)}))
		if got := entries(); !slices.Equal(got, want) {
			t.Fatalf("the log after the voting closed holds %q, want %q", got, want)
		}

		// Votes cast while compactions run are all in the log, and in the export.
		var fresh []*store.Post
		for range 8 {
			fresh = append(fresh, post("fresh"))
		}
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, _, err := s.CompactVoted(ctx, "ann"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		var voters sync.WaitGroup
		for _, p := range fresh {
			voters.Add(1)
			go func() {
				defer voters.Done()
				for _, dir := range []int{1, 0, -1, 0, 1} {
					if _, err := s.VotePost(ctx, "ann", p.ID, dir); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		voters.Wait()
		close(stop)
		wg.Wait()
		if _, _, err := s.CompactVoted(ctx, "ann"); err != nil {
			t.Fatal(err)
		}
		want = []string{entry(p1.ID), entry(c1.ID)}
		for _, p := range fresh {
			want = append(want, entry(p.ID))
		}
		slices.Sort(want)
		if got := entries(); !slices.Equal(got, want) {
			t.Fatalf("the log after concurrent votes and compactions holds %q, want %q", got, want)
		}
		got := exportedVotes(t, s, "ann")
		if len(got) != 10 {
			t.Fatalf("export after concurrent votes: %d votes, want 10", len(got))
		}
		for _, p := range fresh {
			if got[p.ID] != 1 {
				t.Fatalf("export after concurrent votes: %s is %d, want 1", p.ID, got[p.ID])
			}
		}
	})
}

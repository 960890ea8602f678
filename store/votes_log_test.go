package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestVotesExportedAndUnnamedOnDeletion: an account's export lists the votes it holds now — a
// changed vote as it is, a withdrawn or refused one not at all — and its read marks; deleting the account takes
// its name off every vote it cast while the votes stay counted.
func TestVotesExportedAndUnnamedOnDeletion(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		prefix := storetest.Prefix()
		s := b.NewStore(t, store.Options{Prefix: prefix, Now: tickingClock(), WriteLimit: -1})
		if _, err := s.SignUp(ctx, "ann", "password1"); err != nil {
			t.Fatal(err)
		}
		signUp(t, s, "bob")
		post := func(uid, title string) *store.Post {
			t.Helper()
			p, err := s.CreatePost(ctx, store.UserKey(uid), store.NewPost{Title: title})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		p1, p2, own := post("bob", "one"), post("bob", "two"), post("ann", "ann's own")
		c1, err := s.CreateComment(ctx, "bob", store.NewComment{PostID: p1.ID, Body: "a comment"})
		if err != nil {
			t.Fatal(err)
		}
		vote := func(id string, dir int) {
			t.Helper()
			var err error
			if id == c1.ID {
				_, err = s.VoteComment(ctx, "ann", id, dir)
			} else {
				_, err = s.VotePost(ctx, "ann", id, dir)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		vote(p1.ID, 1)
		vote(p2.ID, -1)
		vote(p2.ID, 0) // withdrawn
		vote(c1.ID, -1)
		vote(c1.ID, 1) // changed
		if _, err := s.VotePost(ctx, "ann", own.ID, 1); !store.IsKind(err, store.KindForbidden) {
			t.Fatalf("a vote on one's own post: %v, want FORBIDDEN", err)
		}

		if err := s.MarkPostRead(ctx, "ann", p1.ID); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := s.Export(ctx, "ann", "", &buf); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Votes []struct {
				ItemID string `json:"itemId"`
				Vote   int    `json:"vote"`
			} `json:"votes"`
			ReadMarks []struct {
				PostID   string `json:"postId"`
				Comments int    `json:"commentsWritten"`
			} `json:"readMarks"`
		}
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatalf("decode the export: %v", err)
		}
		got := map[string]int{}
		for _, v := range doc.Votes {
			got[v.ItemID] = v.Vote
		}
		if len(doc.Votes) != 2 || got[p1.ID] != 1 || got[c1.ID] != 1 {
			t.Fatalf("exported votes %+v, want %s up and %s up, once each", doc.Votes, p1.ID, c1.ID)
		}
		if len(doc.ReadMarks) != 1 || doc.ReadMarks[0].PostID != p1.ID || doc.ReadMarks[0].Comments != 1 {
			t.Fatalf("exported read marks %+v, want %s read with its one comment", doc.ReadMarks, p1.ID)
		}

		cpid, cnum, _ := store.CommentKey(c1.ID)
		cvotes, cfield := s.CommentVoteForTest(cpid, cnum, "ann")
		if named, err := b.Client.HExists(ctx, cvotes, cfield).Result(); err != nil || !named {
			t.Fatalf("the vote on the comment is not in %s, field %s (%v)", cvotes, cfield, err)
		}
		if err := s.DeleteAccount(ctx, "ann", "password1", false); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := s.Jobs().RunDue(ctx); err != nil {
				t.Fatal(err)
			}
		}
		pid1, _ := store.PostKey(p1.ID)
		for _, v := range [][2]string{{prefix + "{p:" + pid1 + "}:votes", "ann"}, {cvotes, cfield}} {
			if named, err := b.Client.HExists(ctx, v[0], v[1]).Result(); err != nil || named {
				t.Errorf("%s still names the deleted voter in %s (%v)", v[0], v[1], err)
			}
		}
		if n, err := b.Client.Exists(ctx, prefix+"{u:ann}:voted").Result(); err != nil || n != 0 {
			t.Errorf("the deleted account's vote log is still there (%v)", err)
		}
		l := s.NewLoader()
		if p, err := l.Post(ctx, p1.ID); err != nil || p == nil || p.Upvotes != 1 {
			t.Errorf("post one after the deletion: %+v, %v; want its vote still counted", p, err)
		}
		if c, err := l.Comment(ctx, c1.ID); err != nil || c == nil || c.Upvotes != 1 || c.Downvotes != 0 {
			t.Errorf("the comment after the deletion: %+v, %v; want its vote still counted", c, err)
		}
	})
}

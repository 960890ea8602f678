package store_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// voteThread is a post by ann with n comments by ann, and the votes cast on them.
type voteThread struct {
	f        *fixture
	post     *store.Post
	comments []*store.Comment
	votes    map[string]map[string]int // comment id → voter → vote
}

func newVoteThread(t *testing.T, f *fixture, n int) *voteThread {
	t.Helper()
	vt := &voteThread{f: f, post: f.post("ann", "votes"), votes: map[string]map[string]int{}}
	for i := range n {
		c, err := f.s.CreateComment(f.ctx, "ann", store.NewComment{PostID: vt.post.ID, Body: fmt.Sprintf("comment %d", i+1)})
		if err != nil {
			t.Fatal(err)
		}
		vt.comments = append(vt.comments, c)
		vt.votes[c.ID] = map[string]int{}
	}
	return vt
}

// vote casts voter's vote on comment i (from 0) and returns the comment as the vote left it.
func (vt *voteThread) vote(voter string, i, dir int) *store.Comment {
	vt.f.t.Helper()
	id := vt.comments[i].ID
	c, err := vt.f.s.VoteComment(vt.f.ctx, uk(voter), id, dir)
	if err != nil {
		vt.f.t.Fatalf("vote %s on %s: %v", voter, id, err)
	}
	if dir == 0 {
		delete(vt.votes[id], voter)
	} else {
		vt.votes[id][voter] = dir
	}
	return c
}

// check reads every comment's counts and every voter's vote on it, as a viewer sees them, and
// compares them with the votes cast.
func (vt *voteThread) check(when string, voters ...string) {
	t := vt.f.t
	t.Helper()
	l := vt.f.s.NewLoader()
	for _, c := range vt.comments {
		got, err := l.Comment(vt.f.ctx, c.ID)
		if err != nil || got == nil {
			t.Fatalf("%s: comment %s reads %+v, %v", when, c.ID, got, err)
		}
		up, down := 0, 0
		for _, v := range vt.votes[c.ID] {
			if v == 1 {
				up++
			} else {
				down++
			}
		}
		if got.Upvotes != up || got.Downvotes != down {
			t.Errorf("%s: comment %s has %d up, %d down; want %d, %d", when, c.ID, got.Upvotes, got.Downvotes, up, down)
		}
		for _, voter := range voters {
			v, err := l.CommentVote(vt.f.ctx, got, uk(voter))
			if err != nil || v != vt.votes[c.ID][voter] {
				t.Errorf("%s: %s's vote on %s reads %d (%v), want %d", when, voter, c.ID, v, err, vt.votes[c.ID][voter])
			}
		}
	}
}

// exported returns the votes on comments of voter's export, comment id → vote.
func (vt *voteThread) exported(voter string) map[string]int {
	vt.f.t.Helper()
	var buf bytes.Buffer
	if err := vt.f.s.Export(vt.f.ctx, uk(voter), "", &buf); err != nil {
		vt.f.t.Fatal(err)
	}
	var doc struct {
		Votes []struct {
			ItemID string `json:"itemId"`
			Vote   int    `json:"vote"`
		} `json:"votes"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		vt.f.t.Fatalf("decode the export: %v", err)
	}
	out := map[string]int{}
	for _, v := range doc.Votes {
		out[v.ItemID] = v.Vote
	}
	return out
}

// wantExported is what voter's export should list.
func (vt *voteThread) wantExported(voter string) map[string]int {
	out := map[string]int{}
	for id, votes := range vt.votes {
		if v, ok := votes[voter]; ok {
			out[id] = v
		}
	}
	return out
}

// TestMigrateCommentVotes writes votes on comments, puts them back into a hash per comment as
// layout 5 kept them, and migrates: counts, viewers' votes and exports read right before (the
// migration runs beside traffic), during and after it; a vote cast again before the migration
// reached its comment is not counted twice; the hashes of layout 5 are gone after it, the buckets
// are listpacks, a second run moves nothing, and rebuild moves a hash that a process of layout 5
// writes afterwards.
func TestMigrateCommentVotes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		prefix := storetest.Prefix()
		f := newFixture(t, b, store.Options{Prefix: prefix, WriteLimit: -1})
		ctx := f.ctx
		for _, name := range []string{"ann", "bob", "cat", "dan"} {
			f.user(name)
		}
		vt := newVoteThread(t, f, 12) // comments 1–7 in bucket 0, 8–12 in bucket 1
		vt.vote("bob", 0, 1)
		vt.vote("cat", 0, -1)
		vt.vote("dan", 0, 1)
		vt.vote("bob", 1, -1)
		vt.vote("bob", 8, 1)
		vt.vote("cat", 11, 1)
		vt.check("as written", "bob", "cat", "dan")

		// Layout 5: a hash per comment, voter → vote, no buckets.
		pid, _ := store.PostKey(vt.post.ID)
		for _, bucket := range []string{"v0", "v1"} {
			key := prefix + "{p:" + pid + "}:c:" + bucket
			h, err := b.Client.HGetAll(ctx, key).Result()
			if err != nil || len(h) == 0 {
				t.Fatalf("bucket %s: %v, %v", key, h, err)
			}
			for field, v := range h {
				num, voter, _ := strings.Cut(field, ":")
				legacy := f.s.ThreadKeyForTest(pid, num, ":votes")
				if err := b.Client.HSet(ctx, legacy, voter, v).Err(); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.Client.Del(ctx, key).Err(); err != nil {
				t.Fatal(err)
			}
		}
		// A layout before 6 makes reads look in the hashes of layout 5 too.
		startAtLayout(t, f, b, prefix, 5)
		vt.check("before the migration", "bob", "cat", "dan")
		for _, voter := range []string{"bob", "cat"} {
			if got, want := vt.exported(voter), vt.wantExported(voter); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("before the migration: %s's export lists %v, want %v", voter, got, want)
			}
		}

		// Traffic before the migration reaches the comments: the same vote again changes nothing
		// (it is found in the hash of layout 5), a changed one moves by the difference.
		if c := vt.vote("bob", 0, 1); c.Upvotes != 2 || c.Downvotes != 1 {
			t.Errorf("bob's vote again: %d up, %d down; want 2, 1", c.Upvotes, c.Downvotes)
		}
		if c := vt.vote("cat", 0, 0); c.Upvotes != 2 || c.Downvotes != 0 {
			t.Errorf("cat's vote withdrawn: %d up, %d down; want 2, 0", c.Upvotes, c.Downvotes)
		}
		vt.vote("dan", 8, -1)
		vt.check("during the migration", "bob", "cat", "dan")

		ran, err := f.s.Migrate(ctx, 10*time.Millisecond)
		if err != nil || len(ran) != store.Layout-5 || ran[0].From != 5 {
			t.Fatalf("ran %+v, %v; want the migration from layout 5", ran, err)
		}
		vt.check("after the migration", "bob", "cat", "dan")
		var left []string
		iter := b.Client.Scan(ctx, 0, prefix+"{p:"+pid+"}:c:*:votes", 100).Iterator()
		for iter.Next(ctx) {
			left = append(left, iter.Val())
		}
		if err := iter.Err(); err != nil || len(left) != 0 {
			t.Errorf("hashes of layout 5 left after the migration: %v (%v)", left, err)
		}
		for _, bucket := range []string{"v0", "v1"} {
			key := prefix + "{p:" + pid + "}:c:" + bucket
			if n, err := b.Client.HLen(ctx, key).Result(); err != nil || n == 0 {
				t.Errorf("bucket %s holds %d votes (%v)", bucket, n, err)
			}
			if b.Name != "miniredis" {
				if enc, err := b.Client.ObjectEncoding(ctx, key).Result(); err != nil || enc != "listpack" {
					t.Errorf("bucket %s encoded %q (%v), want listpack", bucket, enc, err)
				}
			}
		}
		if n, err := f.s.BucketCommentVotesForTest(ctx); err != nil || n != 0 {
			t.Fatalf("a second run moved %d votes (%v), want none", n, err)
		}
		vt.check("after a second run", "bob", "cat", "dan")
		for _, voter := range []string{"bob", "cat", "dan"} {
			if got, want := vt.exported(voter), vt.wantExported(voter); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("after the migration: %s's export lists %v, want %v", voter, got, want)
			}
		}

		// A process of layout 5 still running writes a comment's own hash again: rebuild moves it.
		legacy := f.s.ThreadKeyForTest(pid, "3", ":votes")
		if err := b.Client.HSet(ctx, legacy, "dan", "1").Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
		if n, err := b.Client.Exists(ctx, legacy).Result(); err != nil || n != 0 {
			t.Errorf("rebuild left the hash of layout 5 %s (%v)", legacy, err)
		}
		v, err := f.s.NewLoader().CommentVote(ctx, vt.comments[2], "dan")
		if err != nil || v != 1 {
			t.Errorf("dan's vote moved by rebuild reads %d (%v), want 1", v, err)
		}
	})
}

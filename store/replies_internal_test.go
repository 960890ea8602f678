package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/alicebob/miniredis/v2"
)

// TestReplyDecoders checks that a reply of the expected shape decodes and any other is an error
// that names the script and wraps ErrBadReply.
func TestReplyDecoders(t *testing.T) {
	for _, tc := range []struct {
		name    string
		decode  func() (any, error)
		want    any
		wantErr bool
	}{
		{"array", func() (any, error) { return replyArray("s", []any{int64(1), "a"}, 2) }, []any{int64(1), "a"}, false},
		{"array longer than needed", func() (any, error) { return replyArray("s", []any{int64(1), "a"}, 1) }, []any{int64(1), "a"}, false},
		{"array too short", func() (any, error) { return replyArray("s", []any{int64(1)}, 2) }, nil, true},
		{"array nil", func() (any, error) { return replyArray("s", nil, 1) }, nil, true},
		{"array of a string", func() (any, error) { return replyArray("s", "a", 0) }, nil, true},
		{"int", func() (any, error) { return replyInt("s", int64(7)) }, int64(7), false},
		{"int of a string", func() (any, error) { return replyInt("s", "7") }, nil, true},
		{"int nil", func() (any, error) { return replyInt("s", nil) }, nil, true},
		{"string", func() (any, error) { return replyString("s", "a") }, "a", false},
		{"string nil", func() (any, error) { return replyString("s", nil) }, nil, true},
		{"hash", func() (any, error) { return replyHash("s", []any{"a", "1", "b", "2"}) }, map[string]string{"a": "1", "b": "2"}, false},
		{"hash empty", func() (any, error) { return replyHash("s", []any{}) }, map[string]string{}, false},
		{"hash odd", func() (any, error) { return replyHash("s", []any{"a", "1", "b"}) }, nil, true},
		{"hash nil", func() (any, error) { return replyHash("s", nil) }, nil, true},
		{"string of an int", func() (any, error) { return replyString("s", int64(1)) }, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.decode()
			if tc.wantErr {
				var re *ReplyError
				if !errors.Is(err, ErrBadReply) || !errors.As(err, &re) || re.Script != "s" || !strings.Contains(err.Error(), "script s") {
					t.Fatalf("error %v; want a ReplyError of script s wrapping ErrBadReply", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v; want %v", got, tc.want)
			}
		})
	}
}

// TestMalformedRepliesFailWrites runs writes whose script is swapped for one that answers in
// another shape, and checks that each fails with a ReplyError naming the script: before the
// checked decoders, a short email_claim reply panicked, a malformed rate-limit reply let the write
// through, a karma reply of strings ranked the author at 0, and a vote's odd hash read as a
// missing post.
func TestMalformedRepliesFailWrites(t *testing.T) {
	for _, tc := range []struct {
		script, body string
		write        func(ctx context.Context, s *Store, post string) error
	}{
		{"email_claim", "return {}", func(ctx context.Context, s *Store, _ string) error {
			return s.claimEmail(ctx, "ann", "ann@example.com")
		}},
		{"ratelimit", "return 'soon'", func(ctx context.Context, s *Store, _ string) error {
			return s.allow(ctx, s.k.userRate("ann"), limit{"writes", 5, time.Minute}, true)
		}},
		{"karma", "return {'a', 'b'}", func(ctx context.Context, s *Store, _ string) error {
			return s.recordKarma(ctx, "ann", "post:1", 1, 1)
		}},
		{"vote_post", "return {1, 'author'}", func(ctx context.Context, s *Store, post string) error {
			_, err := s.VotePost(ctx, "bob", post, 1)
			return err
		}},
		{"delete_post", "return 7", func(ctx context.Context, s *Store, post string) error {
			return s.DeletePost(ctx, "ann", post)
		}},
	} {
		t.Run(tc.script, func(t *testing.T) {
			ctx := context.Background()
			m := miniredis.RunT(t)
			client := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
			t.Cleanup(func() { _ = client.Close() })
			s, err := New(ctx, client, Options{Prefix: "x:", Password: PasswordParams{Memory: 64, Time: 1, Threads: 1}})
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range []string{"ann", "bob"} {
				if _, err := s.SignUp(ctx, u, "password "+u); err != nil {
					t.Fatal(err)
				}
			}
			p, err := s.CreatePost(ctx, "ann", NewPost{Title: "t", Body: "b"})
			if err != nil {
				t.Fatal(err)
			}
			s.scripts[tc.script] = rdb.NewScript(tc.body) // the runner loads it on NOSCRIPT
			err = tc.write(ctx, s, p.ID)
			var re *ReplyError
			if !errors.Is(err, ErrBadReply) || !errors.As(err, &re) || re.Script != tc.script {
				t.Fatalf("error %v; want a ReplyError of %s", err, tc.script)
			}
		})
	}
}

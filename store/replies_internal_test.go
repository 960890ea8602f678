package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"
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

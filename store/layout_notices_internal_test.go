package store

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPackedNotices: every kind of notification record reads back from its packed form as it was
// written, with what its cause says left out of the packing and the creation time too (the
// inbox's score holds it); a reply by a user with the longest name still packs under 64 bytes (so
// that an inbox's hash stays listpack-encoded); an unread one packs its code in lower case; and
// layout 6's packed records, with the time, and layout 4's JSON read as before.
func TestPackedNotices(t *testing.T) {
	long := strings.Repeat("n", 32)
	at := int64(1764197000123)
	for _, tc := range []struct {
		name, cause string
		rec         noticeRecord
		packed      string
	}{
		{"reply", "c:17:4", noticeRecord{Kind: NotificationReply, At: at, Actor: "bob", Post: "17", Comment: "4"}, "R bob"},
		{"reply by the longest name", "c:123456789:123456789012", noticeRecord{Kind: NotificationReply, At: at, Actor: long, Post: "123456789", Comment: "123456789012"}, "R " + long},
		{"mention in a comment", "c:17:4", noticeRecord{Kind: NotificationMention, At: at, Actor: "bob", Post: "17", Comment: "4"}, "M bob"},
		{"mention in a post", "p:17", noticeRecord{Kind: NotificationMention, At: at, Actor: "bob", Post: "17"}, "M bob"},
		{"follow", "f:bob", noticeRecord{Kind: NotificationFollow, At: at, Actor: "bob"}, "F"},
		{"watched comment", "c:17:4", noticeRecord{Kind: NotificationWatchedComment, At: at, Actor: "bob", Post: "17", Comment: "4"}, "C bob"},
		{"watched post", "p:17", noticeRecord{Kind: NotificationWatchedPost, At: at, Actor: "bob", Post: "17"}, "P bob"},
		{"mod action on a comment", "m:rm:c:17:4", noticeRecord{Kind: NotificationModAction, At: at, Actor: "mod", Post: "17", Comment: "4", Mod: "rm:c:17:4"}, "A mod 17 4"},
		{"mod action on a user", "m:ban:bob", noticeRecord{Kind: NotificationModAction, At: at, Actor: "mod", Mod: "ban:bob"}, "A mod"},
		{"a field the cause does not say", "c:17:4", noticeRecord{Kind: NotificationReply, At: at, Actor: "bob", Post: "18", Comment: "4"}, "R bob 18"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.rec.pack(tc.cause)
			if p != tc.packed {
				t.Errorf("packed %q, want %q", p, tc.packed)
			}
			if len(p) > 64 {
				t.Errorf("packed %q is %d bytes: the inbox's hash would be a hashtable", p, len(p))
			}
			timeless := tc.rec
			timeless.At = 0
			if got, ok := unpackNotice(tc.cause, p); !ok || got != timeless {
				t.Errorf("unpacked %+v (%v), want %+v", got, ok, timeless)
			}
			layout6 := p[:1] + "miglcddn" + p[1:]
			if got, ok := unpackNotice(tc.cause, layout6); !ok || got != tc.rec {
				t.Errorf("layout 6's %q unpacked %+v (%v), want %+v", layout6, got, ok, tc.rec)
			}
			unread := tc.rec
			unread.Unread = true
			if u := unread.pack(tc.cause); u != strings.ToLower(p[:1])+p[1:] {
				t.Errorf("unread, packed %q", u)
			} else if got, ok := unpackNotice(tc.cause, u); !ok || !got.Unread {
				t.Errorf("unread, unpacked %+v (%v)", got, ok)
			}
			js, err := json.Marshal(tc.rec)
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := unpackNotice(tc.cause, string(js)); !ok || got != tc.rec {
				t.Errorf("layout 4's %s read as %+v (%v), want %+v", js, got, ok, tc.rec)
			}
		})
	}
	for _, bad := range []string{"", "X12 bob", "x bob", "R!! bob", "{not json"} {
		if rec, ok := unpackNotice("c:17:4", bad); ok {
			t.Errorf("unpackNotice(%q) = %+v, want not ok", bad, rec)
		}
	}
}

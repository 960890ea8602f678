package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// Since layout 6 the fields of a comment's hash that are written once are packed into one field,
// commentMetaField: "<parent> <created> <closes> <depth> <ord>", the parent as in ids ("4"; "0"
// for a top-level comment), ord empty when the comment has none. The author's name, when known,
// is the field commentNameField, and the author (a user key: the name in lower case) is then not
// kept; commentAuthorField holds the author when the name is unknown (or, which no write makes,
// is not the author's in lower case). One field in place of five, one-letter names and no
// author beside its name save the names and the listpack's per-entry bytes: 248 → 184 bytes of
// MEMORY USAGE for a typical comment. The names stay out of commentMetaField, which holds at most
// 57 bytes, so that no field exceeds Redis's hash-max-listpack-value (64) and the hash stays a
// listpack whatever the names' lengths (up to 32 each). Layout 5 kept each as a field of its own — parent, author, created, closes, depth, ord, aname (the parent in
// stored form, 12 digits). Lua reads and writes them through scripts/lib/comment_meta.lua, Go
// reads them through the functions here.
//
// Both shapes are read everywhere while a keyspace migrates (layout_comments.go): a hash with
// commentMetaField is packed, and has none of layout 5's fields; a hash without it is of layout 5.
// A removal marker (gone, see delete_comment.lua) keeps the shape of layout 5.

// commentMetaField, commentAuthorField and commentNameField are the fields of a packed comment's
// hash that hold what layout 5 kept in parent, author, created, closes, depth, ord and aname.
const commentMetaField, commentAuthorField, commentNameField = "m", "a", "n"

// commentMetaNames are the fields packed in commentMetaField, in their order there, named as
// layout 5 named them.
var commentMetaNames = [...]string{"parent", "created", "closes", "depth", "ord"}

// packedNameOf returns the field of a packed hash that holds field name of layout 5:
// commentMetaField for those packed in it, "" for a field that keeps its name.
func packedNameOf(name string) string {
	switch name {
	case "author":
		return commentAuthorField
	case "aname":
		return commentNameField
	}
	for _, n := range commentMetaNames {
		if n == name {
			return commentMetaField
		}
	}
	return ""
}

// Since layout 7 the times packed in commentMetaField are written short: created as "~" and its
// milliseconds in base 36 ("~mwypb1rn", 9 bytes for 13), closes as "+" and its distance from
// created in base 36 ("+a0b3k0" for seven days; "~" and its own time should it ever come before
// created). That takes a typical comment's hash from an 80-byte listpack to a 64-byte one. A
// value without either mark is decimal milliseconds, as layout 6 wrote them; every reader reads
// both (metaMillis), and the migration from layout 6 rewrites the field (compact_comment.lua).

// metaMillis returns the milliseconds of a created time as commentMetaField packs it: "~" and
// base 36, or decimal (layout 6, and the fields of layout 5); 0 for "" or anything else.
func metaMillis(s string) int64 {
	if len(s) > 1 && s[0] == '~' {
		n, _ := strconv.ParseInt(s[1:], 36, 64)
		return n
	}
	return atoi64(s)
}

// packMillis writes ms as commentMetaField packs a time: "~" and base 36.
func packMillis(ms int64) string { return "~" + strconv.FormatInt(ms, 36) }

// unpackClosesMillis returns the milliseconds of closes packed beside created (both as
// commentMetaField holds them): "+" and a distance from created in base 36, or a time
// (metaMillis); ok is false for an empty closes.
func unpackClosesMillis(closes, created string) (ms int64, ok bool) {
	if closes == "" {
		return 0, false
	}
	if len(closes) > 1 && closes[0] == '+' {
		d, _ := strconv.ParseInt(closes[1:], 36, 64)
		return metaMillis(created) + d, true
	}
	return metaMillis(closes), true
}

// rawCommentMeta returns the fields packed in m, in the order of commentMetaNames, as m holds
// them: "" for a field left empty, the parent as in ids, the times marked (see metaMillis). It
// allocates nothing: the values are parts of m.
func rawCommentMeta(m string) (v [len(commentMetaNames)]string) {
	rest := m
	for i := range v {
		f, r, ok := strings.Cut(rest, " ")
		v[i] = f
		if !ok {
			break
		}
		rest = r
	}
	return v
}

// unpackCommentMeta returns the fields packed in m, in the order of commentMetaNames, "" for a
// field left empty, the parent in stored form ("000000000004", or topLevel) and the times in
// decimal milliseconds, as layout 5 kept them.
func unpackCommentMeta(m string) (v [len(commentMetaNames)]string) {
	v = rawCommentMeta(m)
	if p := v[0]; p != "" && p != topLevel {
		v[0] = padNum(p)
	}
	created, closes := v[1], v[2]
	if strings.HasPrefix(created, "~") {
		v[1] = strconv.FormatInt(metaMillis(created), 10)
	}
	if ms, ok := unpackClosesMillis(closes, created); ok && (closes[0] == '+' || closes[0] == '~') {
		v[2] = strconv.FormatInt(ms, 10)
	}
	return v
}

// packCommentMeta packs the fields v (in the order of commentMetaNames, as unpackCommentMeta
// returns them) as commentMetaField holds them, the times short.
func packCommentMeta(v [len(commentMetaNames)]string) string {
	parent := topLevel
	if v[0] != "" {
		parent = shortNum(v[0])
	}
	var b strings.Builder
	b.WriteString(parent)
	created := metaMillis(v[1])
	for i, f := range v[1:] {
		b.WriteByte(' ')
		switch {
		case f == "":
		case i == 0:
			f = packMillis(created)
		case i == 1:
			if closes := metaMillis(f); closes >= created {
				f = "+" + strconv.FormatInt(closes-created, 36)
			} else {
				f = packMillis(closes)
			}
		}
		b.WriteString(f)
	}
	return b.String()
}

// unpackCommentHash puts the fields of a packed comment's whole hash h (HGETALL) back under
// their names of layout 5, so that h reads the same in either shape.
func unpackCommentHash(h map[string]string) map[string]string {
	m, ok := h[commentMetaField]
	if !ok {
		return h
	}
	for i, v := range unpackCommentMeta(m) {
		if v != "" {
			h[commentMetaNames[i]] = v
		}
	}
	author, name := h[commentAuthorField], h[commentNameField]
	if name != "" {
		h["aname"] = name
	}
	if author = authorOf(author, name); author != "" {
		h["author"] = author
	}
	delete(h, commentMetaField)
	delete(h, commentAuthorField)
	delete(h, commentNameField)
	return h
}

// authorOf is the author of a packed comment whose fields commentAuthorField and
// commentNameField are a and name.
func authorOf(a, name string) string {
	if a != "" {
		return a
	}
	return strings.ToLower(name)
}

// commentArgNames returns the HMGET arguments that read the fields names (as layout 5 named
// them) of a comment's hash in either shape: names, then, when any of them is packed or renamed,
// commentMetaField (which tells the shapes apart) and the renamed fields asked.
func commentArgNames(names ...string) []string {
	out := names[:len(names):len(names)]
	if !slices.ContainsFunc(names, func(n string) bool { return packedNameOf(n) != "" }) {
		return out
	}
	out = append(out, commentMetaField)
	author := slices.Contains(names, "author")
	if author {
		out = append(out, commentAuthorField)
	}
	if author || slices.Contains(names, "aname") { // the author is the name's when a is missing
		out = append(out, commentNameField)
	}
	return out
}

// commentArgs is commentArgNames as HMGET arguments.
func commentArgs(names ...string) []any { return boxed(commentArgNames(names...)) }

// commentValues returns the values of the fields names of a comment's hash from the values v
// of an HMGET of commentArgNames(names...) ("" for a missing field), in either shape: a packed
// hash's when commentMetaField (asked whenever a packed field is) has a value.
func commentValues(names []string, v []string) []string {
	out := v[:len(names):len(names)]
	args := commentArgNames(names...)
	if len(args) == len(names) || v[len(names)] == "" {
		return out // no field packed or renamed asked, or a hash of layout 5
	}
	packed := unpackCommentMeta(v[len(names)])
	extra := func(field string) string {
		if i := slices.Index(args[len(names):], field); i >= 0 {
			return v[len(names)+i]
		}
		return ""
	}
	for i, n := range names {
		switch packedNameOf(n) {
		case "":
		case commentMetaField:
			out[i] = packed[slices.Index(commentMetaNames[:], n)]
		case commentAuthorField:
			out[i] = authorOf(extra(commentAuthorField), extra(commentNameField))
		case commentNameField:
			out[i] = extra(commentNameField)
		}
	}
	return out
}

// hmgetComment adds to a pipeline the HMGET of the fields names of a comment's hash, in either
// shape; commentValues(names, cmd.Val()) gives their values.
func hmgetComment(ctx context.Context, p rdb.Pipeliner, key string, names ...string) *rdb.StringSliceCmd {
	return hmget(ctx, p, key, commentArgs(names...))
}

// commentFieldsNow reads the fields names of comment num of post pid, in either shape: "" for a
// missing field.
func (s *Store) commentFieldsNow(ctx context.Context, pid, num string, names ...string) ([]string, error) {
	v, err := s.cmd().HMGet(ctx, s.k.comment(pid, num), commentArgNames(names...)...).Result()
	if err != nil {
		return nil, fmt.Errorf("read comment %s: %w", commentID(pid, num), err)
	}
	return commentValues(names, strs(v)), nil
}

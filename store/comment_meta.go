package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/agora/agora/internal/rdb"
)

// Since layout 6 the fields of a comment's hash that are written once, or rewritten only whole
// (its author's name), are packed into one field, commentMetaField: "<parent> <author>
// <created> <closes> <depth> <ord> <aname>", the parent as in ids ("4"; "0" for a top-level
// comment), ord and aname empty when the comment has none. One field in place of seven saves
// their names and the listpack's per-entry bytes: 248 → 184 bytes of MEMORY USAGE for a typical
// comment (docs/PERFORMANCE.md). Layout 5 kept each as a field of its own, named as
// commentMetaNames (parent in stored form, 12 digits). Lua reads and writes them through
// scripts/lib/comment_meta.lua, Go reads them through the functions here.
//
// Both shapes are read everywhere while a keyspace migrates (layout_comments.go): a hash with
// commentMetaField is packed, and its fields of layout 5 are absent; a hash without it is of
// layout 5. A removal marker (gone, see delete_comment.lua) keeps the shape of layout 5.

// commentMetaField is the field of a comment's hash that holds its packed fields.
const commentMetaField = "m"

// commentMetaNames are the packed fields in their order in commentMetaField, named as layout 5
// named them.
var commentMetaNames = [...]string{"parent", "author", "created", "closes", "depth", "ord", "aname"}

// isCommentMetaName reports whether a field of layout 5 is packed into commentMetaField.
func isCommentMetaName(name string) bool {
	for _, n := range commentMetaNames {
		if n == name {
			return true
		}
	}
	return false
}

// unpackCommentMeta returns the fields packed in m, in the order of commentMetaNames, "" for a
// field left empty, the parent in stored form ("000000000004", or topLevel).
func unpackCommentMeta(m string) (v [len(commentMetaNames)]string) {
	rest := m
	for i := range len(v) - 1 {
		f, r, ok := strings.Cut(rest, " ")
		if !ok {
			return v
		}
		v[i], rest = f, r
	}
	v[len(v)-1] = rest
	if p := v[0]; p != "" && p != topLevel {
		v[0] = padNum(p)
	}
	return v
}

// packCommentMeta packs the fields v (in the order of commentMetaNames) as commentMetaField
// holds them.
func packCommentMeta(v [len(commentMetaNames)]string) string {
	parent := topLevel
	if v[0] != "" {
		parent = shortNum(v[0])
	}
	var b strings.Builder
	b.WriteString(parent)
	for _, f := range v[1:] {
		b.WriteByte(' ')
		b.WriteString(f)
	}
	return b.String()
}

// commentMetaValue returns field name (one of commentMetaNames) of a packed m.
func commentMetaValue(m, name string) string {
	v := unpackCommentMeta(m)
	for i, n := range commentMetaNames {
		if n == name {
			return v[i]
		}
	}
	return ""
}

// unpackCommentHash puts the fields packed in a comment's whole hash h (HGETALL) back under
// their names of layout 5, so that h reads the same in either shape.
func unpackCommentHash(h map[string]string) map[string]string {
	m, ok := h[commentMetaField]
	if !ok {
		return h
	}
	delete(h, commentMetaField)
	for i, v := range unpackCommentMeta(m) {
		if v != "" {
			h[commentMetaNames[i]] = v
		}
	}
	return h
}

// commentArgs returns the HMGET arguments that read the fields names of a comment's hash in
// either shape: names, then commentMetaField when any of them is packed.
func commentArgs(names ...string) []any { return boxed(commentArgNames(names...)) }

// commentArgNames is commentArgs as strings.
func commentArgNames(names ...string) []string {
	for _, n := range names {
		if isCommentMetaName(n) {
			return append(names[:len(names):len(names)], commentMetaField)
		}
	}
	return names
}

// commentValues returns the values of the fields names of a comment's hash from the values v
// of an HMGET of commentArgs(names...) ("" for a missing field), in either shape.
func commentValues(names []string, v []string) []string {
	out := v[:len(names):len(names)]
	if len(v) == len(names) || v[len(names)] == "" {
		return out
	}
	packed := unpackCommentMeta(v[len(names)])
	for i, n := range names {
		for j, pn := range commentMetaNames {
			if n == pn {
				out[i] = packed[j]
			}
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

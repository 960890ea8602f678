package store

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"testing"
)

// uncheckedAllowed are the unchecked type assertions on reply-shaped values (to string, int64,
// []any and the like, with the ok result dropped or not asked for) that the non-test files of
// package store may hold, as "file:Func: expression" (Func as declName gives it), each with why it
// is not a script reply to decode with replies.go. Every other one fails
// TestNoUncheckedReplyAssertions: a script's reply goes through replyArray, replyInt, replyString,
// replyHash and the others, so that a reply of another shape is a *ReplyError naming the script.
var uncheckedAllowed = map[string]string{
	// Members of a ZSliceCmd: go-redis decodes a ZRANGE WITHSCORES reply's members as strings.
	"bans.go:banCheck.banErr: z.Member.(string)":              "ZRANGE member",
	"feed.go:zrangeMembers: z.Member.(string)":                "ZRANGE member",
	"group_reads.go:Loader.sfwUserGroups: z.Member.(string)":  "ZRANGE member",
	"loader.go:pageOf: z.Member.(string)":                     "ZRANGE member",
	"user_posts.go:userRanking.candidates: z.Member.(string)": "ZRANGE member",

	// Elements of an HMGET command's reply: go-redis gives a string, or nil for a missing field,
	// which reads as "".
	"reads.go:str: v.(string)":                                         "HMGET field: str is the Loader's reader of them",
	"feed.go:Store.runFeedJob: h[0].(string)":                          "HMGET field",
	"feed.go:Store.runFeedJob: h[1].(string)":                          "HMGET field",
	"logins.go:Store.checkCredentials: vals[len(userFields)].(string)": "HMGET field (readCredentials)",
	"readsplice.go:Store.RevisionsAndMarks: v.(string)":                "HMGET field (the read marks)",
	"search_names.go:Store.indexNames: x.(string)":                     "HMGET field",
	"email.go:Store.Email: v[0].(string)":                              "HMGET field",
	"email.go:Store.Email: v[1].(string)":                              "HMGET field",
	"email.go:Store.sendReset: v[0].(string)":                          "HMGET field",
	"email.go:Store.sendReset: v[1].(string)":                          "HMGET field",
	"messages.go:Loader.conversations: vals[0].(string)":               "HMGET field (the conversation's state)",
	"messages.go:Loader.conversations: vals[1].(string)":               "HMGET field (the conversation's state)",
	"messages.go:Store.sendGate: v[1].(string)":                        "HMGET field (the conversation's state)",
	"messages.go:Store.syncConversationOnce: z.Member.(string)":        "ZRANGE member",
	"messages.go:convRead.conversation: vals[i].(string)":              "HMGET field (the conversation's state)",

	// Context values and the loader's own arguments, not replies.
	"ratelimit.go:ClientFrom: ctx.Value(clientKey{}).(string)": "context value",
	"readsplice.go:HoleSplice: ctx.Value(holeKey{}).(bool)":    "context value",
}

// uncheckedPendingFiles are files another branch was changing when the scan was added: their
// unchecked assertions (disown's reply, decoded with strs, and HMGET fields alike) are not checked
// one by one here. Take a file off once its script replies go through replies.go, and list what it
// still asserts that is no script reply in uncheckedAllowed.
var uncheckedPendingFiles = map[string]bool{
	"account_delete.go": true,
}

// replyTypes are the types a reply's value takes in Go: an assertion to one of them is on a reply
// or on something shaped like one.
var replyTypes = map[string]bool{
	"string": true, "int64": true, "int": true, "float64": true, "bool": true,
	"any": true, "interface{}": true, "[]any": true, "[]interface{}": true, "[]string": true,
}

// TestNoUncheckedReplyAssertions scans the non-test files of package store for type assertions to
// a reply's types whose failure is silent (x, _ := v.(T)) or a panic (v.(T) alone): outside
// uncheckedAllowed and uncheckedPendingFiles, each fails, so that script replies are decoded by
// replies.go's checked decoders. Entries of either that match nothing fail too, so the lists stay
// true.
func TestNoUncheckedReplyAssertions(t *testing.T) {
	seen := map[string]bool{}
	storeDecls(t, func(fset *token.FileSet, name string, d ast.Decl) {
		for _, u := range uncheckedIn(d) {
			if uncheckedPendingFiles[name] {
				seen[name] = true
				continue
			}
			key := name + ":" + declName(d) + ": " + types.ExprString(u)
			if _, ok := uncheckedAllowed[key]; !ok {
				t.Errorf("%s: %q is unchecked; decode the script's reply with replies.go (replyString, replyInt, replyArray, replyHash, ...) or, if it is not a script reply, add it to uncheckedAllowed with why",
					fset.Position(u.Pos()), key)
			}
			seen[key] = true
		}
	})
	var stale []string
	for k := range uncheckedAllowed {
		if !seen[k] {
			stale = append(stale, k)
		}
	}
	for name := range uncheckedPendingFiles {
		if !seen[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("uncheckedAllowed names assertions that are no longer there (take them off): %q", stale)
	}
}

// uncheckedIn returns the unchecked assertions to a reply's types in the declaration d.
func uncheckedIn(d ast.Node) []ast.Expr {
	checked := map[*ast.TypeAssertExpr]bool{}
	twoValued := func(lhs []ast.Expr, rhs ast.Expr) {
		ta, ok := rhs.(*ast.TypeAssertExpr)
		if !ok || len(lhs) != 2 {
			return
		}
		id, blank := lhs[1].(*ast.Ident)
		checked[ta] = !blank || id.Name != "_"
	}
	ast.Inspect(d, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if len(n.Rhs) == 1 {
				twoValued(n.Lhs, n.Rhs[0])
			}
		case *ast.ValueSpec:
			if len(n.Values) == 1 {
				lhs := make([]ast.Expr, len(n.Names))
				for i, id := range n.Names {
					lhs[i] = id
				}
				twoValued(lhs, n.Values[0])
			}
		}
		return true
	})
	var out []ast.Expr
	ast.Inspect(d, func(n ast.Node) bool {
		if n, ok := n.(*ast.TypeAssertExpr); ok && n.Type != nil && replyTypes[types.ExprString(n.Type)] && !checked[n] {
			out = append(out, n)
		}
		return true
	})
	return out
}

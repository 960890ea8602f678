package httpapi

import (
	"container/list"
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// DefaultQueryCacheMiB is the default bound of the parsed-document cache.
const DefaultQueryCacheMiB = 32

// docCache is the executor's cache of parsed and validated documents, by query text, bounded by
// bytes (the text and an estimate of its syntax tree, see parsedBytes), least recently used out
// first: a count of documents let anonymous clients pin a thousand 250 KB queries. Each document
// keeps its shape, the limits' variable-free measure, so that shapes are bounded with it.
type docCache struct {
	max int64
	// forget is told of every document that leaves the cache (readexec drops its plans, which
	// hold the document's operations and so its text).
	forget func(*ast.QueryDocument)

	mu      sync.Mutex
	size    int64
	lru     *list.List               // of *docEntry, most recently used first
	entries map[string]*list.Element // by query text
}

// docEntry is one kept document.
type docEntry struct {
	query string
	doc   *ast.QueryDocument
	shape *docShape // nil until the limits measured the document kept
	bytes int64
}

var _ graphql.Cache[*ast.QueryDocument] = (*docCache)(nil)

func newDocCache(maxBytes int64, forget func(*ast.QueryDocument)) *docCache {
	return &docCache{max: maxBytes, forget: forget, lru: list.New(), entries: map[string]*list.Element{}}
}

// Get returns the document of query, marking it used.
func (c *docCache) Get(_ context.Context, query string) (*ast.QueryDocument, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[query]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return el.Value.(*docEntry).doc, true
}

// Add keeps the document of query, evicting the least recently used beyond the bound. A document
// larger than the whole bound is not kept.
func (c *docCache) Add(_ context.Context, query string, doc *ast.QueryDocument) {
	n := parsedBytes(query, doc)
	if n > c.max {
		return
	}
	var gone []*ast.QueryDocument
	c.mu.Lock()
	if el, ok := c.entries[query]; ok {
		old := el.Value.(*docEntry)
		c.size -= old.bytes
		c.lru.Remove(el)
		if old.doc != doc {
			gone = append(gone, old.doc)
		}
	}
	c.entries[query] = c.lru.PushFront(&docEntry{query: query, doc: doc, bytes: n})
	c.size += n
	for c.size > c.max {
		old := c.lru.Remove(c.lru.Back()).(*docEntry)
		delete(c.entries, old.query)
		c.size -= old.bytes
		gone = append(gone, old.doc)
	}
	c.mu.Unlock()
	if c.forget != nil {
		for _, d := range gone {
			c.forget(d)
		}
	}
}

// shape returns the shape kept with the document of query.
func (c *docCache) shape(query string) (*docShape, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[query]; ok {
		sh := el.Value.(*docEntry).shape
		return sh, sh != nil
	}
	return nil, false
}

// setShape keeps sh with the document of query, if that is kept: a document the executor has
// not kept (not yet validated, or invalid) is measured again when it comes back.
func (c *docCache) setShape(query string, sh *docShape) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[query]; ok {
		el.Value.(*docEntry).shape = sh
	}
}

// stats returns the number of documents kept and their bytes.
func (c *docCache) stats() (docs int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries), c.size
}

// nodeBytes is about what the syntax tree takes per node (a selection, an argument, a directive,
// a definition), measured on gqlparser's trees: 9,000 aliased fields in 126 KB of text parse into
// 2.2 MB.
const nodeBytes = 256

// parsedBytes estimates the memory a parsed document holds: its text, which every node's
// position refers to, and its nodes.
func parsedBytes(query string, doc *ast.QueryDocument) int64 {
	n := 0
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			n++
			switch s := sel.(type) {
			case *ast.Field:
				n += len(s.Arguments) + len(s.Directives)
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				n += len(s.Directives)
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				n += len(s.Directives)
			}
		}
	}
	for _, op := range doc.Operations {
		n += 1 + len(op.VariableDefinitions) + len(op.Directives)
		walk(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		n += 1 + len(f.Directives)
		walk(f.SelectionSet)
	}
	return int64(len(query)) + nodeBytes*int64(n)
}

package httpapi

import (
	"fmt"
	"log/slog"
	"testing"
)

// TestResponseCacheBound checks that the cache keeps at most its bound in bytes, dropping the
// least recently used entries first, and never keeps an entry larger than the whole bound.
func TestResponseCacheBound(t *testing.T) {
	entry := func(i, size int) *cacheEntry {
		return &cacheEntry{key: fmt.Sprintf("k%03d", i), body: make([]byte, size),
			revKeys: []string{"agora:{p:1}:rev"}, revVals: []string{"7"}}
	}
	one := entry(0, 1000).bytes()
	c := newResponseCache(nil, slog.New(slog.DiscardHandler), 10*one)
	for i := range 10 {
		c.put(entry(i, 1000))
	}
	if n, size := c.stats(); n != 10 || size != 10*one {
		t.Fatalf("after 10 puts: %d entries, %d bytes; want 10, %d", n, size, 10*one)
	}
	c.touch(c.peekLocked("k000")) // k000 is now the most recently used: k001 goes first
	c.put(entry(10, 1000))
	if c.peekLocked("k001") != nil || c.peekLocked("k000") == nil || c.peekLocked("k010") == nil {
		t.Fatal("the least recently used entry was not the one dropped")
	}
	c.put(entry(11, 5000)) // takes the room of five
	if n, size := c.stats(); size > 10*one || n != 6 {
		t.Fatalf("after a large put: %d entries, %d bytes, bound %d", n, size, 10*one)
	}
	c.put(entry(12, int(20*one))) // larger than the whole cache: not kept, nothing dropped
	if n, _ := c.stats(); n != 6 || c.peekLocked("k012") != nil {
		t.Fatalf("an entry larger than the bound was kept (%d entries)", n)
	}
	c.put(entry(11, 1000)) // replacing an entry frees its old size
	if _, size := c.stats(); size != 6*one {
		t.Fatalf("after replacing an entry: %d bytes, want %d", size, 6*one)
	}
}

// peekLocked is peek for tests.
func (c *responseCache) peekLocked(key string) *cacheEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peek(key)
}

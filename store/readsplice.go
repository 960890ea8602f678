package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/agora/agora/internal/rdb"
)

// The read state of a cached thread. A response that shows unreadCommentCount or viewerHasRead
// would be the reader's own, and the response cache would then keep one copy of a 245 KB thread
// per reader. Instead, while the cache computes a response, read state is written as holes: a
// short marker that valid JSON never holds (a NUL byte, which every JSON string escapes), naming
// the field and the post. The response's entry keeps, for each post with a hole, the thread's
// live bitmap and comment count, read with the post and proven current by the post's revision
// like the rest of the entry; the response itself stays shared by every reader. Serving it — on
// the miss that made it, or on any hit — reads the reader's marks of those posts in the same
// pipeline as the revision check (RevisionsAndMarks), computes each value and writes it in its
// hole. So reading with read state on costs one more HGET per post in the round trip a hit makes
// anyway.

// ReadStateSplice collects the posts whose read state a response leaves as holes.
type ReadStateSplice struct {
	mu    sync.Mutex
	posts []splicePost
	index map[string]int
}

// splicePost is one post with holes: its key, its live bitmap and its comment count.
type splicePost struct {
	pid   string
	live  []byte
	count int
}

// NewReadStateSplice returns an empty splice.
func NewReadStateSplice() *ReadStateSplice { return &ReadStateSplice{index: map[string]int{}} }

type spliceKey struct{}
type holeKey struct{}

// WithReadStateSplice returns ctx carrying sp: the response being made may leave read state as
// holes, which its maker fills.
func WithReadStateSplice(ctx context.Context, sp *ReadStateSplice) context.Context {
	return context.WithValue(ctx, spliceKey{}, sp)
}

// ReadStateSpliceOf returns the splice of the response being made, or nil.
func ReadStateSpliceOf(ctx context.Context) *ReadStateSplice {
	sp, _ := ctx.Value(spliceKey{}).(*ReadStateSplice)
	return sp
}

// ForHole returns ctx for a resolver call whose value is written as a hole: the executor that
// writes the response bytes itself (readexec) asks for one; gqlgen's never does.
func ForHole(ctx context.Context) context.Context { return context.WithValue(ctx, holeKey{}, true) }

// HoleSplice returns the splice a read-state resolver called with ForHole registers its post
// with, or nil when it computes the value itself.
func HoleSplice(ctx context.Context) *ReadStateSplice {
	if on, _ := ctx.Value(holeKey{}).(bool); !on {
		return nil
	}
	return ReadStateSpliceOf(ctx)
}

// Len is the number of posts with holes.
func (sp *ReadStateSplice) Len() int {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return len(sp.posts)
}

// Freeze returns what the holes need once the response is made: it never changes after, so the
// answers served from one entry read it without a lock.
func (sp *ReadStateSplice) Freeze() *ReadStateHoles {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	h := &ReadStateHoles{posts: slices.Clone(sp.posts), Posts: make([]string, len(sp.posts))}
	for i, p := range sp.posts {
		h.Posts[i] = p.pid
	}
	return h
}

// ReadStateHoles is what the holes of one response need: each post's live bitmap and comment
// count, and the posts' keys (Posts) in the order of their indexes, whose marks fill them.
type ReadStateHoles struct {
	posts []splicePost
	Posts []string
}

// Hole registers post p with sp, reading its live bitmap through the loader (the walk has
// read it with the post), and returns the post's index for AppendHole.
func (l *Loader) Hole(ctx context.Context, sp *ReadStateSplice, p *Post) (int, error) {
	pid := p.Key()
	c, err := l.get(ctx, stringRead(l.s.k.liveComments(pid)))
	if err != nil {
		return 0, err
	}
	live, err := c.cmd.(*rdb.StringCmd).Bytes()
	if err != nil && !errors.Is(err, rdb.Nil) {
		return 0, err
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if i, ok := sp.index[pid]; ok {
		return i, nil
	}
	sp.posts = append(sp.posts, splicePost{pid: pid, live: live, count: p.CommentCount})
	sp.index[pid] = len(sp.posts) - 1
	return len(sp.posts) - 1, nil
}

// Hole kinds.
const (
	HoleUnread = 'u' // unreadCommentCount
	HoleRead   = 'r' // viewerHasRead
)

// AppendHole writes the hole of field kind of post index i: NUL, the kind, the index, NUL.
func AppendHole(buf []byte, kind byte, i int) []byte {
	buf = append(buf, 0, kind)
	buf = strconv.AppendInt(buf, int64(i), 10)
	return append(buf, 0)
}

// Hole is one hole found in a response: bytes Start to End, of field Kind of post Post.
type Hole struct {
	Start, End int
	Kind       byte
	Post       int
}

// FindHoles returns the holes of a response, in order; nil when it has none.
func FindHoles(body []byte) []Hole {
	var out []Hole
	for i := 0; i < len(body); i++ {
		if body[i] != 0 || i+2 >= len(body) {
			continue
		}
		j := i + 2
		n := 0
		for j < len(body) && body[j] >= '0' && body[j] <= '9' {
			n = n*10 + int(body[j]-'0')
			j++
		}
		if j < len(body) && body[j] == 0 {
			out = append(out, Hole{Start: i, End: j + 1, Kind: body[i+1], Post: n})
			i = j
		}
	}
	return out
}

// Bytes is about how much memory the holes' data takes.
func (h *ReadStateHoles) Bytes() int {
	n := 48
	for _, p := range h.posts {
		n += len(p.pid) + len(p.live) + 64
	}
	return n
}

// Values returns the value of every post's holes for a reader with the marks given (in the order
// of Posts; "" for a post never marked read): the unread count and viewerHasRead of each, as
// JSON. An anonymous reader (signedIn false) has 0 and false everywhere.
func (h *ReadStateHoles) Values(signedIn bool, marks []string) (unread, read [][]byte) {
	unread, read = make([][]byte, len(h.posts)), make([][]byte, len(h.posts))
	for i, p := range h.posts {
		n, r := 0, false
		if signedIn {
			if i < len(marks) && marks[i] != "" {
				w, _ := strconv.ParseInt(marks[i], 10, 64)
				n, r = UnreadAfter(p.live, w), true
			} else {
				n = p.count
			}
		}
		unread[i] = strconv.AppendInt(nil, int64(n), 10)
		read[i] = strconv.AppendBool(nil, r)
	}
	return unread, read
}

// RevisionsAndMarks is RevisionsCurrent that also reads viewer's read marks of the posts pids in
// the same pipeline ("" for a post not marked; nil for an anonymous viewer or no posts): one
// round trip.
func (s *Store) RevisionsAndMarks(ctx context.Context, keys, values []string, viewer UserKey, pids []string) (bool, []string, error) {
	cmds := make([]*rdb.StringCmd, len(keys))
	ops := make([]op, len(keys), len(keys)+1)
	for i, k := range keys {
		ops[i] = op{key: k, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			cmds[i] = p.Get(ctx, k)
			return cmds[i], nil
		}}
	}
	var marks *rdb.SliceCmd
	if viewer != "" && len(pids) > 0 {
		key := s.k.readMarks(string(viewer))
		ops = append(ops, op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			marks = p.HMGet(ctx, key, pids...)
			return marks, nil
		}})
	}
	if err := s.pipeline(ctx, ops, false); err != nil {
		return false, nil, fmt.Errorf("read revisions: %w", err)
	}
	for i, c := range cmds {
		v, err := c.Result()
		if err != nil && !errors.Is(err, rdb.Nil) {
			return false, nil, fmt.Errorf("read revisions: %w", err)
		}
		if v != values[i] {
			return false, nil, nil
		}
	}
	if marks == nil {
		return true, nil, nil
	}
	vals, err := marks.Result()
	if err != nil {
		return false, nil, fmt.Errorf("read marks: %w", err)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i], _ = v.(string)
	}
	return true, out, nil
}

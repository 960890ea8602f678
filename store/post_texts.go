package store

import (
	"context"
	"fmt"

	"github.com/agora/agora/internal/rdb"
)

// postHash reads a post's whole hash with its body kept apart (keys.postTexts) put in as the
// field body where the hash has none, in one round trip: the hash as the post
// scripts reply with it (scripts/lib/post_texts.lua post_reply). It is empty for no post.
func (s *Store) postHash(ctx context.Context, pid string) (map[string]string, error) {
	key, texts := s.k.post(pid), s.k.postTexts(pid)
	var h *rdb.MapStringStringCmd
	var t *rdb.SliceCmd
	err := s.pipeline(ctx, []op{{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		h, t = p.HGetAll(ctx, key), p.HMGet(ctx, texts, postTextBody)
		return h, t
	}}}, false)
	if err == nil {
		err = rdb.FirstErr([2]rdb.Cmder{h, t})
	}
	if err != nil {
		return nil, fmt.Errorf("read post %s: %w", pid, err)
	}
	m := h.Val()
	if len(m) == 0 {
		return m, nil
	}
	if _, ok := m["body"]; !ok && str(t.Val()[0]) != "" {
		m["body"] = str(t.Val()[0])
	}
	return m, nil
}

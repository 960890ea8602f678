package store

import (
	"context"
	"fmt"
	"time"
)

// allowWrite records a write by uid in its sliding window and fails with KindRateLimited when the
// window is full.
func (s *Store) allowWrite(ctx context.Context, uid string) error {
	if s.opts.WriteLimit < 0 {
		return nil
	}
	v, err := s.run(ctx, "ratelimit", []string{s.k.userRate(uid)},
		s.now().UnixMilli(), s.opts.WriteWindow.Milliseconds(), s.opts.WriteLimit, randomHex(8))
	if err != nil {
		return err
	}
	wait, _ := v.(int64)
	if wait <= 0 {
		return nil
	}
	retry := time.Duration(wait) * time.Millisecond
	secs := int((retry + time.Second - 1) / time.Second)
	return &Error{Kind: KindRateLimited, Msg: fmt.Sprintf("too many writes; retry in %d s", secs),
		RetryAfter: time.Duration(secs) * time.Second}
}

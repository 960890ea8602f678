package jobs

import "context"

// Claimed is a claimed job, for the tests.
type Claimed = claimed

// Claim takes at most max due jobs, as a run does, for a test that records their outcomes itself.
func (e *Engine) Claim(ctx context.Context, max int) ([]Claimed, error) {
	c, _, err := e.claim(ctx, max)
	return c, err
}

// Finish records the outcome of c ("ok", "retry", …) due now, as a run does; a test sends it again
// as go-redis resends a script whose reply was lost.
func (e *Engine) Finish(ctx context.Context, c Claimed, outcome string) error {
	return e.finish(ctx, c, outcome, e.now(), "")
}

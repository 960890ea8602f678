package store

import "context"

// replyOrdersDoes is what the migration from layout 5 does for the reply orders, for `agora
// migrate --dry-run`.
const replyOrdersDoes = "keep the TOP, BEST and CONTROVERSIAL orders of a parent's replies ({p:<id>}:c:<n>:rs, " +
	":rb, :rc) only where the parent has 32 replies or more, marked by the field o of its hash (the post's for " +
	"its top-level comments); the other parents lose them, and the reader ranks their replies (about 190 bytes " +
	"less per comment); the orders kept are scored again (CONTROVERSIAL's power is now computed in a way Lua " +
	"and Go agree on to the last bit)"

// migrateReplyOrders brings every thread's reply orders to layout 6 (see reply_orders.lua): a
// parent with replyOrdersAt replies or more is marked and its orders scored again; the other
// parents' TOP, BEST and CONTROVERSIAL orders are emptied, which deletes them. It is
// rescoreThread on every thread, so it is idempotent and resumable (a second run finds every
// parent as the first left it), safe beside traffic (each batch is one script on its thread's
// slot), and what Rebuild does. It returns how many threads it went through.
func (s *Store) migrateReplyOrders(ctx context.Context) (int, error) {
	pids, err := s.threadPosts(ctx)
	if err != nil {
		return 0, err
	}
	for i, pid := range pids {
		if _, err := s.rescoreThread(ctx, pid); err != nil {
			return i, err
		}
	}
	return len(pids), nil
}

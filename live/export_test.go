package live

// GapRetries returns how many retries of owed Gaps h has scheduled and not yet run.
func GapRetries(h *Hub) int64 { return h.retries.Load() }

package storetest

import (
	"sync"
	"time"
)

// Clock is a clock a test moves by hand, for Options.Now: it stands still until Add.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock at the present, to the millisecond (what Redis scores keep).
func NewClock() *Clock { return NewClockAt(time.Now()) }

// NewClockAt returns a Clock at t, to the millisecond.
func NewClockAt(t time.Time) *Clock { return &Clock{t: t.Truncate(time.Millisecond)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

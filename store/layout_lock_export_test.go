package store

import "time"

// MigrateLockTTL returns o with d as the lease of the migration lock (migrateLockTTL otherwise).
func MigrateLockTTL(o Options, d time.Duration) Options {
	o.migrateLockTTL = d
	return o
}

// MemoryInterval returns o with d as the interval of the memory watch (memoryInterval otherwise).
func MemoryInterval(o Options, d time.Duration) Options {
	o.memoryInterval = d
	return o
}

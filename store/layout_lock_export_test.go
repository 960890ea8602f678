package store

import "time"

// MigrateLockTTL returns o with d as the lease of the migration lock (migrateLockTTL otherwise).
func MigrateLockTTL(o Options, d time.Duration) Options {
	o.migrateLockTTL = d
	return o
}

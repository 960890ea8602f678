package store

// UserRankCap returns o with n as the number of a user's newest posts, or comments, a sorted
// read of them ranks (userRankCap otherwise).
func UserRankCap(o Options, n int) Options {
	o.userRankCap = n
	return o
}

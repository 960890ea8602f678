package resolvers

import (
	"context"

	"github.com/agora/agora/store"
)

// setBlock blocks or unblocks the user userID for the viewer, and makes the rest of the
// mutation's response read with the viewer's new block list.
func (r *Resolver) setBlock(ctx context.Context, userID string, block bool) (*store.User, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	target, err := store.ParseUserID(userID)
	if err != nil {
		return nil, err
	}
	change := r.Store.Unblock
	if block {
		change = r.Store.Block
	}
	u, err := change(ctx, uid, target)
	wrote(ctx)
	if err == nil {
		loaderFrom(ctx).SetBlocked(target, block)
	}
	return u, err
}

// viewerBlocks reports whether the viewer blocks u; false when anonymous.
func viewerBlocks(ctx context.Context, u *store.User) bool {
	if viewerFrom(ctx) == "" {
		return false
	}
	return loaderFrom(ctx).ViewerBlocks(u.Key())
}

// changePassword changes the viewer's password and ends their other sessions.
func (r *Resolver) changePassword(ctx context.Context, current, next string) (bool, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return false, err
	}
	if err := r.Store.ChangePassword(ctx, uid, requestFrom(ctx).Token, current, next); err != nil {
		return false, err
	}
	return true, nil
}

// logOutEverywhere ends every session of the viewer, the request's included.
func (r *Resolver) logOutEverywhere(ctx context.Context) (bool, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return false, err
	}
	if err := r.Store.LogOutEverywhere(ctx, uid); err != nil {
		return false, err
	}
	return true, nil
}

// setEmail sets the viewer's email address and mails its verification link.
func (r *Resolver) setEmail(ctx context.Context, email, password string) (*store.User, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	u, err := r.Store.SetEmail(ctx, uid, email, password)
	wrote(ctx)
	return u, err
}

// sendPasswordReset mails a reset link to a user, for a site admin.
func (r *Resolver) sendPasswordReset(ctx context.Context, userID string) (bool, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return false, err
	}
	if !r.Store.IsAdmin(uid) {
		return false, &store.Error{Kind: store.KindForbidden, Msg: "only a site admin may send a password reset"}
	}
	target, err := store.ParseUserID(userID)
	if err != nil {
		return false, err
	}
	if err := r.Store.SendPasswordReset(ctx, target); err != nil {
		return false, err
	}
	return true, nil
}

// email returns u's address and whether it is verified when the viewer is u or a site admin;
// nothing for everyone else.
func (r *Resolver) email(ctx context.Context, u *store.User) (string, bool, error) {
	v := viewerFrom(ctx)
	if v == "" || (v != u.Key() && !r.Store.IsAdmin(v)) {
		return "", false, nil
	}
	return r.Store.Email(ctx, u.Key())
}

// deleteAccount deletes the viewer's account (see store.DeleteAccount) and returns its user id,
// as every deletion returns the id a client cache evicts.
func (r *Resolver) deleteAccount(ctx context.Context, password string, erase bool) (string, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return "", err
	}
	err = r.Store.DeleteAccount(ctx, uid, password, erase)
	wrote(ctx)
	if err != nil {
		return "", err
	}
	return uid.ID(), nil
}

// deleteUser deletes a user's account, for a site admin (see store.DeleteUser), and returns its
// user id.
func (r *Resolver) deleteUser(ctx context.Context, userID string, erase bool) (string, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return "", err
	}
	target, err := store.ParseUserID(userID)
	if err != nil {
		return "", err
	}
	err = r.Store.DeleteUser(ctx, uid, target, erase)
	wrote(ctx)
	if err != nil {
		return "", err
	}
	return target.ID(), nil
}

package db

import (
	"context"
	"fmt"
	"time"
)

// UseTokenID records that the OIDC token with id jti, valid until
// expires, was accepted now. It returns false, storing nothing, when the
// id was recorded before and its token has not expired: the token is being
// replayed. Ids of expired tokens are dropped on the way, since the
// issuer's signature check refuses those tokens anyway.
func (db *DB) UseTokenID(ctx context.Context, jti string, expires time.Time) (bool, error) {
	done, err := db.writing(ctx)
	if err != nil {
		return false, err
	}
	defer done()
	now := time.Now().UnixNano()
	if _, err := db.sql.ExecContext(ctx, `DELETE FROM token_ids WHERE expires_ns < $1`, now); err != nil {
		return false, fmt.Errorf("dropping expired token ids: %w", err)
	}
	res, err := db.sql.ExecContext(ctx, `INSERT INTO token_ids (jti, expires_ns) VALUES ($1, $2) ON CONFLICT (jti) DO NOTHING`, jti, expires.UnixNano())
	if err != nil {
		return false, fmt.Errorf("recording a token id: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("recording a token id: %w", err)
	}
	return n == 1, nil
}

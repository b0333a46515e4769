package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/verdict/db"
)

func TestUseTokenIDOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, st *db.DB) {
		ctx := context.Background()
		now := time.Now()
		for _, tc := range []struct {
			name    string
			jti     string
			expires time.Time
			fresh   bool
		}{
			{"first use", "a", now.Add(5 * time.Minute), true},
			{"replayed while valid", "a", now.Add(5 * time.Minute), false},
			{"another token", "b", now.Add(5 * time.Minute), true},
			{"an expired id is dropped", "old", now.Add(-time.Second), true},
			{"so its id may come again", "old", now.Add(5 * time.Minute), true},
			{"and is then held", "old", now.Add(5 * time.Minute), false},
		} {
			fresh, err := st.UseTokenID(ctx, tc.jti, tc.expires)
			if err != nil || fresh != tc.fresh {
				t.Errorf("%s: UseTokenID(%q) = %v, %v; want %v", tc.name, tc.jti, fresh, err, tc.fresh)
			}
		}
	})
}

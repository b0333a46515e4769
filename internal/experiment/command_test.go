package experiment

import (
	"testing"

	"github.com/perfgate/perfgate/internal/load"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in, jobIndex string
		want         load.Shard
		refused      bool
	}{
		{in: "", want: load.Shard{}},
		{in: "1/4", want: load.Shard{Index: 1, Of: 4}},
		{in: "/4", jobIndex: "3", want: load.Shard{Index: 3, Of: 4}},
		{in: "4/4", refused: true},
		{in: "/4", refused: true},
		{in: "two", refused: true},
	} {
		got, err := ParseShard(tc.in, tc.jobIndex)
		if (err != nil) != tc.refused || got != tc.want {
			t.Errorf("ParseShard(%q, %q) = %+v, %v", tc.in, tc.jobIndex, got, err)
		}
	}
}

package load_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load"
)

// TestHitStatusCountsRightAnswersOnly: a hit by status is an expected and
// right answer with that status. A target answering 203 to a group that
// does not expect it, or 203 with a wrong body, has failed those requests;
// counting them as hits once put the hit ratio over 100 %.
func TestHitStatusCountsRightAnswersOnly(t *testing.T) {
	t.Parallel()
	bothEngines(t, testHitStatusCountsRightAnswersOnly)
}

func testHitStatusCountsRightAnswersOnly(t *testing.T) {
	t.Parallel()
	var cached atomic.Int64
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/cached" {
			// A 203 the group "other" does not expect.
			w.WriteHeader(http.StatusNonAuthoritativeInfo)
			fmt.Fprint(w, "ok")
			return
		}
		switch cached.Add(1) % 3 {
		case 0:
			w.WriteHeader(http.StatusNonAuthoritativeInfo)
			fmt.Fprint(w, "ok") // a hit
		case 1:
			w.WriteHeader(http.StatusNonAuthoritativeInfo)
			fmt.Fprint(w, "stale") // a wrong answer with the hit's status
		default:
			fmt.Fprint(w, "ok") // a miss
		}
	})
	src, groups := getSource("cached", "other")
	groups[0].Expect = []int{200, 203}
	groups[0].Answer = &load.AnswerRule{Body: "ok"}
	r := run(t, load.Attack{Target: srv.URL, Source: src, Groups: groups, Pacer: load.ConstantPacer{Freq: 120},
		Hit: &load.HitRule{Status: []int{203}}, Duration: 500 * time.Millisecond, Engine: engineOf(t)})
	g, other := r.Groups[0], r.Groups[1]
	if g.WrongAnswers == 0 || g.Statuses[203] <= g.WrongAnswers {
		t.Fatalf("the target's pattern was not measured: %d wrong answers, statuses %v", g.WrongAnswers, g.Statuses)
	}
	if want := g.Statuses[203] - g.WrongAnswers; g.Hits != want || g.Hits+g.Statuses[200] != g.Expected {
		t.Errorf("cached: %d hits, want %d (the right 203s); %d expected, statuses %v, %d wrong answers",
			g.Hits, want, g.Expected, g.Statuses, g.WrongAnswers)
	}
	if other.Unexpected == 0 || other.Hits != 0 {
		t.Errorf("other: %d hits among %d unexpected 203s, want none", other.Hits, other.Unexpected)
	}
	if tot := r.Total(); tot.Hits > tot.Expected {
		t.Errorf("total: %d hits of %d expected answers", tot.Hits, tot.Expected)
	}
}

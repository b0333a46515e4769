package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/perfgate/perfgate/internal/verdict"
)

// PostExperiment files a capacity experiment's report and returns the
// service's receipt: its id and the default branch's last experiment on
// the same target, to judge the knee against.
func (c *Client) PostExperiment(ctx context.Context, p verdict.ExperimentPost) (verdict.ExperimentReceipt, error) {
	var rc verdict.ExperimentReceipt
	b, err := json.Marshal(p)
	if err != nil {
		return rc, fmt.Errorf("posting the experiment on %s: %w", p.Target, err)
	}
	if err := c.do(ctx, http.MethodPost, "/v1/experiments", nil, b, &rc); err != nil {
		return rc, fmt.Errorf("posting the experiment on %s: %w", p.Target, err)
	}
	return rc, nil
}

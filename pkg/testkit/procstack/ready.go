package procstack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxWorkersBody bounds the GET /workers answer Ready reads.
const maxWorkersBody = 8 << 20

// Ready reports (nil) whether the stack behind the api at baseURL is ready
// for work: GET /readyz answers 200 and GET /workers, authenticated with
// apiKey, lists every one of workers. Otherwise the error says what is
// missing. Each request is bounded by ctx and hc's timeout.
func Ready(ctx context.Context, hc *http.Client, baseURL, apiKey string, workers []string) error {
	if _, err := get(ctx, hc, baseURL+"/readyz", apiKey); err != nil {
		return err
	}
	b, err := get(ctx, hc, baseURL+"/workers", apiKey)
	if err != nil {
		return err
	}
	var list struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("GET /workers: decode answer: %w", err)
	}
	live := map[string]bool{}
	for _, it := range list.Items {
		live[it.ID] = true
	}
	for _, w := range workers {
		if !live[w] {
			return fmt.Errorf("worker %s not listed by GET /workers", w)
		}
	}
	return nil
}

// get requires 200 from url and returns the body.
func get(ctx context.Context, hc *http.Client, url, apiKey string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	req.Header.Set("X-API-Key", apiKey)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxWorkersBody))
	if err != nil {
		return nil, fmt.Errorf("GET %s: read answer: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s answered %d: %.200s", url, resp.StatusCode, b)
	}
	return b, nil
}

package orchsvc

import "context"

// Run builds an orchestrator from cfg and runs it until ctx is done.
func Run(ctx context.Context, cfg Config) error {
	s, err := New(ctx, cfg)
	if err != nil {
		return err
	}
	return s.Run(ctx)
}

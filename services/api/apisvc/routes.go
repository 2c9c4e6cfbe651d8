package apisvc

import (
	"net/http"

	"github.com/braidhq/braid/pkg/buildinfo"

	"github.com/gin-gonic/gin"
)

func init() { gin.SetMode(gin.ReleaseMode) }

// routes builds the gin engine: global middleware, the public endpoints,
// and every authenticated endpoint of SPEC §8. Only the authenticated ones
// are rate limited: probes, metrics scrapes and the UI's static files cost
// little and must answer while a client is being throttled.
func (s *Server) routes() *gin.Engine {
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.ContextWithFallback = true
	r.Use(requestIDs, traceRequests, s.accessLog, s.metrics.observe, s.problems, s.recoverer, s.limitBody)
	r.NoRoute(noRoute)
	r.NoMethod(noMethod)

	r.GET("/healthz", s.healthz)
	r.GET("/readyz", s.readyz)
	r.GET("/metrics", s.metrics.handler())
	r.GET("/openapi.json", openAPI)
	r.GET("/ui", redirectUI)
	r.GET("/ui/*path", serveUI)
	r.HEAD("/ui/*path", serveUI)

	a := r.Group("/", s.authenticate, s.rateLimit, authorize)
	a.GET("/whoami", whoami)
	a.POST("/workflows", s.registerWorkflow)
	a.POST("/workflows/validate", s.validateWorkflow)
	a.GET("/workflows", s.listWorkflows)
	a.GET("/workflows/:name", s.getWorkflow)
	a.GET("/workflows/:name/versions", s.workflowVersions)
	a.GET("/workflows/:name/layout", s.workflowLayout)
	a.DELETE("/workflows/:name", s.deleteWorkflow)
	a.POST("/workflows/:name/runs", s.createRun)
	a.POST("/workflows/:name/run", s.createRun)

	a.GET("/runs", s.listRuns)
	a.GET("/runs/:id", s.getRun)
	a.DELETE("/runs/:id", s.deleteRun)
	a.GET("/runs/:id/events", s.runEvents)
	a.GET("/runs/:id/tasks", s.listTasks)
	a.GET("/runs/:id/tasks/:node", s.getTask)
	a.GET("/runs/:id/tasks/:node/logs", s.taskLogs)
	for _, ctl := range controls {
		a.POST("/runs/:id/"+ctl.verb, s.control(ctl))
	}
	a.POST("/runs/:id/tasks/:node/approve", s.approval(true))
	a.POST("/runs/:id/tasks/:node/reject", s.approval(false))

	a.POST("/schedules", s.createSchedule)
	a.GET("/schedules", s.listSchedules)
	a.GET("/schedules/:id", s.getSchedule)
	a.PATCH("/schedules/:id", s.updateSchedule)
	a.DELETE("/schedules/:id", s.deleteSchedule)

	a.GET("/workers", s.listWorkers)
	return r
}

// healthz reports that the process is alive.
func (s *Server) healthz(c *gin.Context) {
	respond(c, http.StatusOK, map[string]string{"status": "ok", "version": buildinfo.Get().String()})
}

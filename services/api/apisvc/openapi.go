package apisvc

import (
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

// OpenAPIDocument is the api's OpenAPI 3.0 description, served at
// /openapi.json. Tests hold every handler to it.
//
//go:embed openapi.json
var OpenAPIDocument []byte

// openAPI serves OpenAPIDocument.
func openAPI(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, "application/json", OpenAPIDocument)
}

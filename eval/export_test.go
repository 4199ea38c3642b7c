package eval

import "os"

// E2EServer is the Ollama server (and its log) the E2E tests use: eval's
// own when EDGEAGENT_E2E_EVAL_HOST names one — CI starts it, so that these
// tests' sixty-odd calls do not queue ahead of other packages' E2E tests on
// a server that answers one request at a time — else $OLLAMA_HOST.
func E2EServer() (host, log string) {
	if h := os.Getenv("EDGEAGENT_E2E_EVAL_HOST"); h != "" {
		return h, os.Getenv("EDGEAGENT_E2E_EVAL_LOG")
	}
	return os.Getenv("OLLAMA_HOST"), os.Getenv("OLLAMA_SERVE_LOG")
}

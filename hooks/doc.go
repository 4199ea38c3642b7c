// Package hooks is edgeagent's plugin contract: what a plugin is, the hooks
// it may implement around each stage of the agent cycle, and the Manager that
// orders plugins and runs their hooks.
//
// A plugin is any value with an Info method. It opts into a hook by
// implementing that hook's one-method interface (BeforeActer, AfterSenser,
// ...), the way an io.Reader opts into io.WriterTo, so a plugin that only
// audits actions is a dozen lines and the Manager never calls empty methods.
//
// Before-hooks form a chain: they run one after another in execution order
// on the same pointer, so each sees what the previous ones did, and a plugin
// may end the chain early with ErrStop. BeforeAct stops at the first error,
// because that is where permission and safety checks refuse actions; the
// other chains log and report errors and carry on, because a broken enricher
// must not stop the robot. After-hooks and OnError only observe, so they run
// concurrently on copies and their errors are never fatal.
//
// Execution order comes from DependsOn (hard), RunAfter/RunBefore (soft: only
// relative to plugins that are loaded) and Priority (higher first, then name),
// and is recomputed whenever a plugin is added or removed, never per call.
//
// Loading a plugin's tools and sensors is done elsewhere (the runtime that
// builds plugins from the board config); this package gives it ordering,
// lifecycle and hook dispatch, and Decline for plugins that choose not to load.
package hooks

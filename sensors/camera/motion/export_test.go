package motion

// ProcessCPU lets the footage benchmarks (package motion_test, which
// imports camera and so cannot be package motion) report CPU time too.
var ProcessCPU = processCPU
